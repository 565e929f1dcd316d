/**
 * Who may do what in an account, checked on every admin route after the session is read:
 *   read      every member: keys, usage, activity, presets, guardrails, tickets
 *   manage    owner and admins: keys, presets, guardrails, routing, alerts
 *   revoke    owner and admins: revoking a key, also while the account is suspended (it only takes
 *             access away, and a leaked key must be stoppable during a suspension too)
 *   billing   the owner: top-ups
 *   link      the owner: replacing or revoking the dashboard link, also while the account is suspended
 *             (a leaked link must be stoppable, as a leaked key)
 *   team      the owner: members and roles
 *   support   every member: tickets, also while the account is suspended
 *   chat      every member: the playground
 * A suspended account may still read, write to support, revoke keys and replace or revoke its dashboard
 * link; everything else is 403 account_suspended.
 * A dashboard-link session acts as the owner of its accountless account.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Role, Session } from './people/sessions.ts'

export type Action = 'read' | 'manage' | 'revoke' | 'billing' | 'link' | 'team' | 'support' | 'chat'

const ALLOWED: Record<Action, readonly Role[]> = {
  read: ['owner', 'admin', 'member'],
  manage: ['owner', 'admin'],
  revoke: ['owner', 'admin'],
  billing: ['owner'],
  link: ['owner'],
  team: ['owner'],
  support: ['owner', 'admin', 'member'],
  chat: ['owner', 'admin', 'member'],
}

const WHILE_SUSPENDED: ReadonlySet<Action> = new Set(['read', 'support', 'revoke', 'link'])

const RULES: Record<Action, string> = {
  read: 'reading this account',
  manage: "changing the account's keys and settings is for its owner and admins",
  revoke: "revoking the account's keys is for its owner and admins",
  billing: 'only the account owner can top up the balance',
  link: "only the account owner can replace or revoke the account's dashboard link",
  team: "only the account owner can manage the account's members",
  support: 'support',
  chat: 'the playground',
}

/** Throws the refusal when the session may not do `action`. */
export function authorize(session: Session, action: Action): void {
  if (session.accountStatus === 'suspended' && !WHILE_SUSPENDED.has(action)) {
    throw new ServiceError(
      'account_suspended',
      'This account is suspended; it can read its data, revoke keys and its dashboard link, and contact support. Contact support.',
    )
  }
  if (!ALLOWED[action].includes(session.role)) {
    const who = session.role === 'admin' ? 'an admin' : `a ${session.role}`
    throw new ServiceError('forbidden', `Not allowed for ${who}: ${RULES[action]}.`)
  }
}
