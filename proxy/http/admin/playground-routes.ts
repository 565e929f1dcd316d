/**
 * The dashboard playground (action `chat`: every member of an account not suspended): free trial chat and
 * explicitly paid chat, both through the gateway in process (see accounts/playground/playground.ts).
 */
import { Elysia } from 'elysia'
import {
  PlaygroundAnswer,
  PlaygroundChat,
  TrialStatus,
} from '../../../shared/schemas/admin/playground.ts'
import { playgroundChat } from '../../accounts/playground/playground.ts'
import { readTrial } from '../../accounts/playground/trial.ts'
import type { AdminDeps } from './admin-deps.ts'
import { requireSession } from './admin-session.ts'

export function playgroundRoutes(deps: AdminDeps) {
  return new Elysia({ prefix: '/playground' })
    .get(
      '/trial',
      async ({ request }) => {
        const session = await requireSession(deps, request, 'read')
        return readTrial(deps.sql, deps.catalog, session.accountId, deps.playground)
      },
      { response: TrialStatus, detail: { summary: 'Free chat messages used and left' } },
    )
    .post(
      '/chat',
      async ({ request, body }) => {
        const session = await requireSession(deps, request, 'chat')
        return playgroundChat(deps, session.accountId, body, request.signal)
      },
      {
        body: PlaygroundChat,
        response: { 200: PlaygroundAnswer },
        detail: {
          summary:
            'Chat in the playground: free trial messages, or paid (paid: true) charged to the balance',
          description:
            'Free: 402 trial_exhausted when the free messages are used, 409 request_in_progress while another free message runs, 503 when free chat cannot be served (no paid request is made instead). With stream: true the answer is a Chat Completions event stream.',
        },
      },
    )
}
