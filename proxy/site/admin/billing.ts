/**
 * An account's money as its members see it, and the top-up step. Only the owner tops up (a team's
 * members and admins cannot), an accountless account only once its owner confirmed saving both secrets
 * (no recovery exists without them), and a suspended account not at all.
 *
 * Payments do not exist yet: `topUpInstructions` is where the payment flow plugs in (create a checkout or
 * show a payment address, then credit the account through `creditAccount` when the payment settles).
 * Until then the answer tells the owner to ask the operator, who runs `bun run admin -- credit`.
 */
import type { Billing, TopUp } from '../../../shared/schemas/admin/billing.ts'
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import { loadAccount } from '../../admission/load-account.ts'
import { secretsConfirmed } from '../../people/accountless.ts'
import type { Session } from '../../people/sessions.ts'
import { authorize } from './permissions.ts'
import type { OperatorDeps } from '../../accounts/operator-deps.ts'

/** The live balance, holds and available amount (loaded from Postgres when the store has none). */
export async function accountMoney(deps: OperatorDeps, accountId: string) {
  let snapshot = await deps.store.snapshot(accountId)
  if (!snapshot.loaded) {
    await loadAccount(deps.sql, deps.store, accountId)
    snapshot = await deps.store.snapshot(accountId)
  }
  return { balanceNano: snapshot.balanceNano, heldNano: snapshot.heldNano, availableNano: snapshot.availableNano }
}

export async function billingView(deps: OperatorDeps, session: Session): Promise<Billing> {
  const money = await accountMoney(deps, session.accountId)
  const refusal = await topUpRefusal(deps, session)
  return {
    accountId: session.accountId,
    ...money,
    balanceUsd: nanoToUsd(money.balanceNano),
    heldUsd: nanoToUsd(money.heldNano),
    availableUsd: nanoToUsd(money.availableNano),
    topUp: { allowed: !refusal, reason: refusal?.message ?? null },
  }
}

/** The top-up step for the session's account; throws the refusal when this session may not top up. */
export async function topUpInstructions(deps: OperatorDeps, session: Session): Promise<TopUp> {
  const refusal = await topUpRefusal(deps, session)
  if (refusal) throw refusal
  return {
    accountId: session.accountId,
    method: 'operator',
    instructions: `Online payments are not available yet: contact the operator to add credit to account ${session.accountId}.`,
  }
}

async function topUpRefusal(deps: OperatorDeps, session: Session): Promise<ServiceError | undefined> {
  try {
    authorize(session, 'billing')
  } catch (error) {
    if (error instanceof ServiceError) return error
    throw error
  }
  if (!(await secretsConfirmed(deps.sql, session.accountId))) {
    return new ServiceError(
      'forbidden',
      'Confirm that you saved both the API key and the dashboard link first: an account without e-mail or wallet cannot be recovered if they are lost.',
    )
  }
  return undefined
}
