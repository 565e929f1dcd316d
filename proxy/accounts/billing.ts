/**
 * An account's money as its members see it, and the top-up step. Only the owner tops up (a team's
 * members and admins cannot), an accountless account only once its owner confirmed saving both secrets
 * (no recovery exists without them), and a suspended account not at all.
 *
 * With card payments configured the top-up starts a Stripe Checkout (payments/stripe.ts); without them the
 * answer tells the owner to ask the operator, who runs `bun run admin -- credit`.
 */
import type { Billing, Deposit, KeyHolds, TopUp } from '../../shared/schemas/admin/billing.ts'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { liveSnapshot } from '../stores/admission/load-account.ts'
import { secretsConfirmed } from './people/accountless.ts'
import type { Session } from './people/sessions.ts'
import { authorize } from './permissions.ts'
import type { OperatorDeps } from './operator-deps.ts'
import { startCheckout, type CardPayments } from './payments/stripe.ts'
import { depositAddress, type Deposits } from './payments/deposits.ts'

/**
 * The live balance, holds and available amount (loaded from Postgres when the store has none), and the
 * open holds by key. The store's snapshot counts holds per key already, so this reads no hold one by one
 * (a list of single requests in progress would need a scan of the account's holds in every store).
 */
export async function accountMoney(deps: OperatorDeps, accountId: string) {
  const snapshot = await liveSnapshot(deps.sql, deps.store, accountId)
  const busy = snapshot.keys
    .filter((key) => key.inFlight > 0 || key.heldNano > 0)
    .sort((a, b) => b.heldNano - a.heldNano || b.inFlight - a.inFlight)
  const names =
    busy.length === 0
      ? []
      : // Holds are counted per rotation lineage: each is shown as the lineage's newest key.
        await deps.sql<{ lineage: string; id: string; name: string; prefix: string }[]>`
    SELECT DISTINCT ON (limits_key_id) limits_key_id AS lineage, id, name, prefix FROM api_keys
    WHERE account_id = ${accountId} AND limits_key_id = ANY(${busy.map((key) => key.keyId)}::text[])
    ORDER BY limits_key_id, created_at DESC`
  const byLineage = new Map(names.map((row) => [row.lineage, row]))
  const holds: KeyHolds[] = busy.map((key) => ({
    keyId: byLineage.get(key.keyId)?.id ?? key.keyId,
    name: byLineage.get(key.keyId)?.name ?? '',
    prefix: byLineage.get(key.keyId)?.prefix ?? '',
    inFlight: key.inFlight,
    heldNano: key.heldNano,
    heldUsd: nanoToUsd(key.heldNano),
  }))
  return {
    balanceNano: snapshot.balanceNano,
    heldNano: snapshot.heldNano,
    availableNano: snapshot.availableNano,
    inFlight: snapshot.inFlight,
    holds,
  }
}

/** How the server takes payments: cards (Stripe) and stablecoin deposits, either may be off. */
export type PaymentMethods = { cards?: CardPayments; deposits?: Deposits }

export async function billingView(
  deps: OperatorDeps,
  session: Session,
  { cards, deposits }: PaymentMethods,
): Promise<Billing> {
  const money = await accountMoney(deps, session.accountId)
  const refusal = await topUpRefusal(deps, session)
  const card = cards && {
    minNano: cards.minNano,
    maxNano: cards.maxNano,
    minUsd: nanoToUsd(cards.minNano),
    maxUsd: nanoToUsd(cards.maxNano),
  }
  return {
    accountId: session.accountId,
    ...money,
    balanceUsd: nanoToUsd(money.balanceNano),
    heldUsd: nanoToUsd(money.heldNano),
    availableUsd: nanoToUsd(money.availableNano),
    topUp: {
      allowed: !refusal,
      reason: refusal?.message ?? null,
      deposits: deposits !== undefined,
      card: card ?? null,
    },
  }
}

/**
 * The account's deposit address (made on first request) and what it accepts, for whoever may top up:
 * an accountless account sees it only once both secrets are confirmed saved.
 */
export async function depositView(
  deps: OperatorDeps,
  session: Session,
  deposits: Deposits | undefined,
): Promise<Deposit> {
  const refusal = await topUpRefusal(deps, session)
  if (refusal) throw refusal
  if (!deposits) throw new ServiceError('not_found', 'This server takes no stablecoin deposits.')
  return {
    accountId: session.accountId,
    address: await depositAddress(deps.sql, deposits, session.accountId),
    chainId: deposits.chainId,
    confirmations: deposits.confirmations,
    tokens: deposits.tokens,
  }
}

/**
 * The top-up step for the session's account (throws the refusal when this session may not top up): a
 * card checkout of `amountNano` when the server takes cards, else the operator's instructions.
 */
export async function startTopUp(
  deps: OperatorDeps,
  session: Session,
  cards: CardPayments | undefined,
  input: { amountNano?: number; returnUrl: string },
): Promise<TopUp> {
  const refusal = await topUpRefusal(deps, session)
  if (refusal) throw refusal
  if (!cards)
    return {
      accountId: session.accountId,
      method: 'operator',
      instructions: `This server takes no online payments: contact the operator to add credit to account ${session.accountId}.`,
    }
  if (input.amountNano === undefined)
    throw new ServiceError('invalid_request', 'amountNano: give the amount to top up.', {
      param: 'amountNano',
    })
  const { payment, url } = await startCheckout(deps, cards, {
    accountId: session.accountId,
    amountNano: input.amountNano,
    returnUrl: input.returnUrl,
  })
  return { accountId: session.accountId, method: 'card', paymentId: payment.id, url }
}

async function topUpRefusal(
  deps: OperatorDeps,
  session: Session,
): Promise<ServiceError | undefined> {
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
