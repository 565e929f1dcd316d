/**
 * The account's keys (`/admin/v1/keys`): list (any member), create, change, revoke and rotate (owner and
 * admins; revoking also while the account is suspended, so a leaked key can be stopped). Creating a key
 * is also personal recovery: a signed-in session, or the dashboard link's, can make a replacement for a
 * lost key. Another account's key is 404. The secret is shown once, on creation
 * or rotation; listings never carry it. `GET /keys/defaults` says which spend caps a new key gets when
 * its create call leaves them out, so a form can show them.
 */
import { Elysia, t } from 'elysia'
import {
  ApiKey,
  ApiKeyChanges,
  ApiKeys,
  CreatedApiKey,
  KeyDefaults,
  NewApiKey,
  RotatedKey,
} from '../../../shared/schemas/admin/keys.ts'
import { createKey, keyDefaults, listKeys, revokeKey, updateKey } from '../../accounts/keys.ts'
import { rotateKey } from '../../accounts/rotation.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

const KeyId = t.Object({ id: t.String() })

export function keyRoutes(deps: AdminDeps) {
  return new Elysia()
    .get(
      '/keys',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return listKeys(deps, session.accountId)
      },
      {
        response: ApiKeys,
        detail: {
          summary: "The account's keys: prefix, name, status, limits, last use (never the secret)",
        },
      },
    )
    .get(
      '/keys/defaults',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return keyDefaults(deps, session.accountId)
      },
      {
        response: KeyDefaults,
        detail: {
          summary:
            'The spend caps a new key gets when its create call leaves them out (lower for accountless accounts)',
        },
      },
    )
    .post(
      '/keys',
      async ({ request, body, set }) => {
        const session = await requireSession(deps, request, 'manage')
        set.status = 201
        return createKey(deps, session.accountId, body)
      },
      {
        body: NewApiKey,
        response: { 201: CreatedApiKey },
        detail: {
          summary:
            'Create a key (also the way to replace a lost one); the key is returned this once. Spend caps left out get the defaults.',
        },
      },
    )
    .patch(
      '/keys/:id',
      async ({ request, params, body }) => {
        const session = await requireSession(deps, request, 'manage')
        return updateKey(deps, params.id, body, { accountId: session.accountId })
      },
      {
        params: KeyId,
        body: ApiKeyChanges,
        response: ApiKey,
        detail: {
          summary: "Change a key's name, limits, models or guardrail; null removes a limit",
        },
      },
    )
    .post(
      '/keys/:id/revoke',
      async ({ request, params }) => {
        const session = await requireSession(deps, request, 'revoke')
        return revokeKey(deps, params.id, { accountId: session.accountId })
      },
      {
        params: KeyId,
        response: ApiKey,
        detail: { summary: 'Revoke a key: refused at once on every process' },
      },
    )
    .post(
      '/keys/:id/rotate',
      async ({ request, params, set }) => {
        const session = await requireSession(deps, request, 'manage')
        set.status = 201
        return rotateKey(deps, session.accountId, params.id)
      },
      {
        params: KeyId,
        response: { 201: RotatedKey },
        detail: {
          summary:
            'Rotate a key: a new key with the same settings; the old one works 24 more hours (409 if already rotated)',
        },
      },
    )
}
