/**
 * Accounts and their money, for operators: create, credit, and read the live state. A credit is first
 * a ledger row in Postgres, then applied to the live balance once (the admission store remembers which
 * ledger entries it applied), so a retried or racing credit cannot count twice.
 */
import type { TransactionSql } from 'postgres'
import { ServiceError } from '../../shared/errors.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { loadAccount } from '../stores/admission/load-account.ts'
import { rearmAlert } from './alerts/rearm.ts'
import { newAccountId, newCreditId } from './ids.ts'
import type { OperatorDeps } from './operator-deps.ts'

export async function createAccount(
  deps: OperatorDeps,
  input: { creditNano?: number },
): Promise<{ accountId: string }> {
  const accountId = newAccountId()
  await deps.sql`INSERT INTO accounts (id) VALUES (${accountId})`
  if (input.creditNano) await creditAccount(deps, accountId, input.creditNano, 'initial credit')
  return { accountId }
}

export type CreditReceipt = {
  accountId: string
  entryId: string
  amountNano: number
  amountUsd: string
  availableNano: number
  availableUsd: string
}

export async function creditAccount(
  deps: OperatorDeps,
  accountId: string,
  amountNano: number,
  reason: string,
): Promise<CreditReceipt> {
  if (!Number.isSafeInteger(amountNano) || amountNano <= 0) {
    throw new ServiceError('invalid_request', 'Credit amount must be a positive amount of USD.', {
      param: 'usd',
    })
  }
  await requireAccount(deps, accountId)
  const entryId = newCreditId()
  await deps.sql.begin(async (tx) => {
    if (await wouldOverflow(tx, accountId, amountNano))
      throw new ServiceError(
        'invalid_request',
        `A credit of ${nanoToUsd(amountNano)} USD would take the balance of ${accountId} past ${nanoToUsd(Number.MAX_SAFE_INTEGER)} USD, the most an account can hold.`,
        { param: 'amountNano' },
      )
    await tx`
      INSERT INTO ledger (account_id, request_id, kind, amount_nano, reason)
      VALUES (${accountId}, ${entryId}, 'credit', ${amountNano}, ${reason})`
  })
  const availableNano = await applyToBalance(deps, accountId, entryId, amountNano)
  return {
    accountId,
    entryId,
    amountNano,
    amountUsd: nanoToUsd(amountNano),
    availableNano,
    availableUsd: nanoToUsd(availableNano),
  }
}

/**
 * Whether a credit of `amountNano` would take the account's ledger balance past the largest amount a
 * balance can hold (2^53 - 1 nano-USD): past it the account could no longer be read or loaded for
 * admission. Called in the transaction that writes the credit: it locks the account's row first, so
 * credits of one account are checked and written one at a time and two cannot both pass the check.
 */
export async function wouldOverflow(
  tx: TransactionSql,
  accountId: string,
  amountNano: number,
): Promise<boolean> {
  await tx`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`
  // A statement of its own, after the lock: it sees every credit committed before the lock was granted.
  const [row] = await tx<{ over: boolean }[]>`
    SELECT coalesce(sum(amount_nano), 0) + ${amountNano}::bigint > ${Number.MAX_SAFE_INTEGER}::bigint AS over
    FROM ledger WHERE account_id = ${accountId}`
  return row!.over
}

/**
 * Applies a ledger entry Postgres has committed (a credit, or an adjustment of either sign) to the live
 * balance, once per entry; returns the available balance after. A crash before this call is repaired by
 * the maintenance job, which applies recent entries again (the store ignores those it has).
 */
export async function applyToBalance(
  deps: Pick<OperatorDeps, 'sql' | 'store'>,
  accountId: string,
  entryId: string,
  amountNano: number,
): Promise<number> {
  const applied = await deps.store.credit(accountId, entryId, amountNano)
  if (applied.status === 'cold') await loadAccount(deps.sql, deps.store, accountId)
  const { availableNano } = await deps.store.snapshot(accountId)
  // A credit alert that fired is armed again once the balance is back at its threshold.
  await rearmAlert(deps.sql, accountId, availableNano)
  return availableNano
}

/** The live money state of an account (loaded from Postgres if the store has none) and its keys' spend. */
export async function showAccount(deps: OperatorDeps, accountId: string) {
  const account = await requireAccount(deps, accountId)
  let snapshot = await deps.store.snapshot(accountId)
  if (!snapshot.loaded) {
    await loadAccount(deps.sql, deps.store, accountId)
    snapshot = await deps.store.snapshot(accountId)
  }
  const [ledger] = await deps.sql<{ nano: number }[]>`
    SELECT coalesce(sum(amount_nano), 0)::bigint AS nano FROM ledger WHERE account_id = ${accountId}`
  const keys = await deps.sql<
    {
      id: string
      limits_key_id: string
      prefix: string
      name: string
      status: string
      daily_limit_nano: number | null
      monthly_limit_nano: number | null
    }[]
  >`
    SELECT id, limits_key_id, prefix, name, status, daily_limit_nano, monthly_limit_nano FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at`
  const spend = new Map(snapshot.keys.map((key) => [key.keyId, key]))
  return {
    accountId,
    kind: account.kind,
    status: account.status,
    balanceNano: snapshot.balanceNano,
    heldNano: snapshot.heldNano,
    availableNano: snapshot.availableNano,
    balanceUsd: nanoToUsd(snapshot.balanceNano),
    heldUsd: nanoToUsd(snapshot.heldNano),
    availableUsd: nanoToUsd(snapshot.availableNano),
    inFlight: snapshot.inFlight,
    ledgerBalanceNano: ledger!.nano,
    ledgerBalanceUsd: nanoToUsd(ledger!.nano),
    keys: keys.map((key) => {
      // A key counts in its rotation lineage's windows: a rotated key and its replacement show the same.
      const live = spend.get(key.limits_key_id)
      return {
        id: key.id,
        prefix: key.prefix,
        name: key.name,
        status: key.status,
        inFlight: live?.inFlight ?? 0,
        heldNano: live?.heldNano ?? 0,
        heldUsd: nanoToUsd(live?.heldNano ?? 0),
        daily: {
          spentNano: live?.daySpentNano ?? 0,
          spentUsd: nanoToUsd(live?.daySpentNano ?? 0),
          limitNano: key.daily_limit_nano,
          limitUsd: key.daily_limit_nano === null ? null : nanoToUsd(key.daily_limit_nano),
        },
        monthly: {
          spentNano: live?.monthSpentNano ?? 0,
          spentUsd: nanoToUsd(live?.monthSpentNano ?? 0),
          limitNano: key.monthly_limit_nano,
          limitUsd: key.monthly_limit_nano === null ? null : nanoToUsd(key.monthly_limit_nano),
        },
      }
    }),
  }
}

async function requireAccount(deps: OperatorDeps, accountId: string) {
  const [account] = await deps.sql<
    { kind: string; status: string }[]
  >`SELECT kind, status FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  return account
}
