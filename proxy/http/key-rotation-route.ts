/**
 * `POST /keys/:id/rotate` on the API server (at the root, not under /v1): authenticated with the key
 * `:id` itself, errors in the OpenAI-style shape. The answer (201) is `{ key, id, prefix, oldKey: { id,
 * expiresAt } }`: the new key, shown this once, and the old key's end of grace, 24 hours out (see
 * accounts/rotation.ts), marked `cache-control: no-store`. Another key's id is 403 (a restricted key must
 * not obtain a broader one's secret; the dashboard rotates any key of the account), as is a calling key
 * in its grace; a key rotated meanwhile (two rotations at once) is 409.
 */
import { Elysia } from 'elysia'
import { requireCurrentKey, requireSelf, rotateKey } from '../accounts/rotation.ts'
import { keyEndpoint } from '../pipeline/endpoint.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import type { AdminDeps } from './admin/admin-deps.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
import { addressTrust, clientAddress } from './client-address.ts'

export function keyRotationRoute(gw: Gateway, admin: AdminDeps) {
  const trust = addressTrust(admin.config)
  return new Elysia().post(
    '/keys/:id/rotate',
    ({ request, server, params }) =>
      keyEndpoint(
        gw,
        request,
        {
          style: 'account',
          render: () => chatErrorBody,
          address: () => clientAddress(server, request, trust),
          // The answer carries the new key, shown this once: no cache may keep it.
          headers: () => ({ 'cache-control': 'no-store' }),
        },
        async (key) => {
          requireCurrentKey(key)
          requireSelf(key, params.id)
          return { body: await rotateKey(admin, key.accountId, params.id), status: 201 }
        },
      ),
    // The body is not read: rotation takes no options.
    { parse: 'none' },
  )
}
