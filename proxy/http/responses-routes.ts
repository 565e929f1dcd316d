/**
 * Stored responses of the Responses style: retrieve (`GET /responses/:id`, the SDK's `responses.retrieve`),
 * list the items it was made from (`GET /responses/:id/input_items`, `responses.inputItems.list`) and
 * delete (`DELETE /responses/:id`), for the account of the key. A stored response is retrieved whole:
 * `?stream=true` (replaying its events) is refused by name rather than answered with JSON, which a
 * client reading events would take for an empty stream.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { keyEndpoint } from '../pipeline/endpoint.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
import { inputItemsPage } from '../pipeline/styles/responses/input-items.ts'
import { clientAddress, type AddressTrust } from './client-address.ts'

export function responsesRoutes(gw: Gateway, trust: AddressTrust) {
  const answer = (
    request: Request,
    address: () => string,
    id: string,
    act: (accountId: string) => Promise<Record<string, unknown> | undefined>,
  ) =>
    keyEndpoint(
      gw,
      request,
      { style: 'responses', render: () => chatErrorBody, address },
      async (key) => {
        if (request.method === 'GET' && wantsStream(request))
          throw new ServiceError(
            'invalid_request',
            'stream: streaming a stored response is not supported; retrieve it without stream',
            { param: 'stream' },
          )
        const body = await act(key.accountId)
        if (!body) throw new ServiceError('not_found', `No stored response ${id}.`)
        return { body }
      },
    )
  return new Elysia()
    .get('/responses/:id', ({ request, params, server }) =>
      answer(
        request,
        () => clientAddress(server, request, trust),
        params.id,
        (accountId) => gw.responses.response(params.id, accountId),
      ),
    )
    .get('/responses/:id/input_items', ({ request, params, server }) =>
      answer(
        request,
        () => clientAddress(server, request, trust),
        params.id,
        async (accountId) => {
          const chain = await gw.responses.chain(params.id, accountId, 'responses')
          if (!chain) return undefined
          const page = inputItemsPage(chain, new URL(request.url).searchParams)
          if (page instanceof ServiceError) throw page
          return page
        },
      ),
    )
    .delete('/responses/:id', ({ request, params, server }) =>
      answer(
        request,
        () => clientAddress(server, request, trust),
        params.id,
        async (accountId) =>
          (await gw.responses.delete(params.id, accountId))
            ? { id: params.id, object: 'response', deleted: true }
            : undefined,
      ),
    )
}

/** Whether the query asks for the stored response as a stream (`stream=true`, as the SDKs send it). */
function wantsStream(request: Request): boolean {
  const stream = new URL(request.url).searchParams.get('stream')
  return stream === 'true' || stream === '1'
}
