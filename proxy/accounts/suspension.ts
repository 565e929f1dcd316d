/**
 * Suspending an account and lifting it. The operator commands call these, and so will the integrations
 * that detect a cause on their own: a payment chargeback, a sanctions-screening hit, an abuse report.
 *
 * Effect, at once on every process: the account's cached key records are dropped (locally and over
 * Redis pub/sub), so the next request reloads them with the account's status and gets 403
 * account_suspended; admin sessions read the status on every request and keep only read and support
 * access (accounts/permissions.ts). Requests already admitted finish and settle normally.
 */
import { ServiceError } from '../../shared/errors.ts'
import { SUSPENSION_REASONS, type SuspensionReason } from '../../shared/schemas/admin/operator.ts'
import type { OperatorDeps } from './operator-deps.ts'

export type SuspensionView = {
  accountId: string
  status: 'active' | 'suspended'
  reason: SuspensionReason | null
  note: string | null
  suspendedAt: string | null
}

type Deps = Pick<OperatorDeps, 'sql' | 'keys' | 'clock'>
type Row = {
  id: string
  status: 'active' | 'suspended'
  suspended_reason: SuspensionReason | null
  suspended_note: string | null
  suspended_at: Date | null
}

/**
 * Suspends the account. Suspending it again keeps the first `suspendedAt` and records the latest reason
 * and note (a chargeback found on an account already suspended for abuse, for example).
 */
export async function suspendAccount(
  deps: Deps,
  accountId: string,
  reason: SuspensionReason,
  note?: string,
): Promise<SuspensionView> {
  if (!SUSPENSION_REASONS.includes(reason)) {
    throw new ServiceError(
      'invalid_request',
      `reason: must be one of ${SUSPENSION_REASONS.join(', ')}`,
      { param: 'reason' },
    )
  }
  const [row] = await deps.sql<Row[]>`
    UPDATE accounts
    SET status = 'suspended', suspended_reason = ${reason}, suspended_note = ${note ?? null},
        suspended_at = coalesce(suspended_at, ${new Date(deps.clock.now())})
    WHERE id = ${accountId}
    RETURNING id, status, suspended_reason, suspended_note, suspended_at`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  await deps.keys.invalidate({ accountId })
  return view(row)
}

/** Lifts a suspension (an operator decision); lifting an account that is not suspended changes nothing. */
export async function liftSuspension(deps: Deps, accountId: string): Promise<SuspensionView> {
  const [row] = await deps.sql<Row[]>`
    UPDATE accounts SET status = 'active', suspended_reason = NULL, suspended_note = NULL, suspended_at = NULL
    WHERE id = ${accountId}
    RETURNING id, status, suspended_reason, suspended_note, suspended_at`
  if (!row) throw new ServiceError('not_found', `No account ${accountId}.`)
  await deps.keys.invalidate({ accountId })
  return view(row)
}

function view(row: Row): SuspensionView {
  return {
    accountId: row.id,
    status: row.status,
    reason: row.suspended_reason,
    note: row.suspended_note,
    suspendedAt: row.suspended_at ? row.suspended_at.toISOString() : null,
  }
}
