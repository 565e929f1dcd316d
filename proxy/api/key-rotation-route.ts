/**
 * `POST /keys/:id/rotate` on the API server (at the root, not under /v1): authenticated with any valid key
 * of the same account, errors in the OpenAI-style shape. The answer (201) is `{ key, id, prefix, oldKey:
 * { id, expiresAt } }`: the new key, shown this once, and the old key's end of grace, 24 hours out
 * (see accounts/rotation.ts). Another account's key id is 404; a key already rotated or revoked is 409.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { rotateKey } from '../accounts/rotation.ts'
import { authenticateRequest } from '../gateway/authenticate.ts'
import { newCall } from '../gateway/call.ts'
import type { Gateway } from '../gateway/gateway.ts'
import { errorResponse } from '../gateway/respond.ts'
import type { AdminDeps } from '../site/admin/admin-deps.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'
import { clientAddress } from './catalog-routes.ts'

export function keyRotationRoute(gw: Gateway, admin: AdminDeps) {
  return new Elysia().post(
    '/keys/:id/rotate',
    ({ request, server, params }) => rotateWithKey(gw, admin, request, params.id, () => clientAddress(server, request)),
    // The body is not read: rotation takes no options.
    { parse: 'none' },
  )
}

async function rotateWithKey(gw: Gateway, admin: AdminDeps, request: Request, keyId: string, address: () => string): Promise<Response> {
  const call = newCall('chat')
  const auth = await authenticateRequest(gw, request, { allowXApiKey: false, address })
  if (!auth.ok) return errorResponse(call, auth.error, chatErrorBody)
  try {
    const rotated = await rotateKey(admin, auth.key.accountId, keyId)
    return Response.json(rotated, { status: 201, headers: { 'x-request-id': call.requestId } })
  } catch (error) {
    if (error instanceof ServiceError) return errorResponse(call, error, chatErrorBody)
    throw error
  }
}
