/**
 * Stored responses of the Responses style: retrieve (`GET /responses/:id`, the SDK's `responses.retrieve`)
 * and delete (`DELETE /responses/:id`), for the account of the key.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { keyEndpoint } from '../pipeline/endpoint.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
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
