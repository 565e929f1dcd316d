/**
 * Stored responses of the Responses style: retrieve (`GET /responses/:id`, the SDK's `responses.retrieve`)
 * and delete (`DELETE /responses/:id`), for the account of the key.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { authenticateRequest } from '../gateway/authenticate.ts'
import { clientAddress } from './catalog-routes.ts'
import { newCall } from '../gateway/call.ts'
import type { Gateway } from '../gateway/gateway.ts'
import { errorResponse } from '../gateway/respond.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'

export function responsesRoutes(gw: Gateway) {
  const answer = async (request: Request, address: () => string, id: string, act: (accountId: string) => Promise<Record<string, unknown> | undefined>) => {
    const call = newCall('responses')
    const auth = await authenticateRequest(gw, request, { allowXApiKey: false, address })
    if (!auth.ok) return errorResponse(call, auth.error, chatErrorBody)
    const result = await act(auth.key.accountId)
    if (!result) return errorResponse(call, new ServiceError('not_found', `No stored response ${id}.`), chatErrorBody)
    return Response.json(result, { headers: { 'x-request-id': call.requestId } })
  }
  return new Elysia()
    .get('/responses/:id', ({ request, params, server }) =>
      answer(request, () => clientAddress(server, request), params.id, (accountId) => gw.responses.response(params.id, accountId)),
    )
    .delete('/responses/:id', ({ request, params, server }) =>
      answer(request, () => clientAddress(server, request), params.id, async (accountId) => ((await gw.responses.delete(params.id, accountId)) ? { id: params.id, object: 'response', deleted: true } : undefined)),
    )
}
