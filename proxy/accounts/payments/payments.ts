/**
 * Payments, whatever brought them (a card checkout, an on-chain deposit): recorded once per provider
 * identity, credited at most once, reversed at most once. Crediting writes the ledger entry in the same
 * transaction that marks the payment credited, under a row lock, so replays and concurrent duplicates of
 * a provider's event find the payment credited and change nothing; the live balance follows through the
 * once-per-entry credit call (accounts.ts `applyToBalance`). A reversal is an adjustment entry of the
 * negative amount: the balance may go below zero only this way, and the account then admits no request
 * until it is topped up.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import { log } from '../../core/log.ts'
import { applyToBalance, wouldOverflow } from '../accounts.ts'
import { newPaymentId } from '../ids.ts'
import type { OperatorDeps } from '../operator-deps.ts'

export type PaymentProvider = 'stripe' | 'chain'
export type PaymentState = 'pending' | 'credited' | 'failed' | 'reversed' | 'held'

export type Payment = {
  id: string
  accountId: string
  provider: PaymentProvider
  externalId: string
  amountNano: number
  amountUsd: string
  currency: string
  state: PaymentState
  createdAt: string
  updatedAt: string
}

type Row = {
  id: string
  account_id: string
  provider: PaymentProvider
  external_id: string
  amount_nano: number
  currency: string
  state: PaymentState
  created_at: Date
  updated_at: Date
}

type Deps = Pick<OperatorDeps, 'sql' | 'store'>

const view = (row: Row): Payment => ({
  id: row.id,
  accountId: row.account_id,
  provider: row.provider,
  externalId: row.external_id,
  amountNano: row.amount_nano,
  amountUsd: nanoToUsd(row.amount_nano),
  currency: row.currency,
  state: row.state,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
})

/** A payment as the provider describes it when it starts (or is first seen). */
export type NewPayment = {
  accountId: string
  provider: PaymentProvider
  externalId: string
  amountNano: number
  currency: string
  detail?: Record<string, unknown>
}

/** Records a payment once; recording the same provider identity again returns the first record. */
export async function recordPayment(sql: Sql, input: NewPayment): Promise<Payment> {
  const [inserted] = await sql<Row[]>`
    INSERT INTO payments (id, account_id, provider, external_id, amount_nano, currency, detail)
    VALUES (${newPaymentId()}, ${input.accountId}, ${input.provider}, ${input.externalId},
            ${input.amountNano}, ${input.currency}, ${sql.json((input.detail ?? {}) as never)})
    ON CONFLICT (provider, external_id) DO NOTHING
    RETURNING *`
  if (inserted) return view(inserted)
  return (await findPayment(sql, input.provider, input.externalId))!
}

export async function findPayment(
  sql: Sql,
  provider: PaymentProvider,
  externalId: string,
): Promise<Payment | undefined> {
  const [row] = await sql<Row[]>`
    SELECT * FROM payments WHERE provider = ${provider} AND external_id = ${externalId}`
  return row ? view(row) : undefined
}

/** The account's payments, newest first. */
export async function listPayments(sql: Sql, accountId: string, limit = 50): Promise<Payment[]> {
  const rows = await sql<Row[]>`
    SELECT * FROM payments WHERE account_id = ${accountId} ORDER BY created_at DESC, id LIMIT ${limit}`
  return rows.map(view)
}

export type Outcome = { payment: Payment; changed: boolean }

/**
 * Credits a recorded payment: pending (or held, when the operator releases it) becomes credited with its
 * ledger entry. Any other state is left as it is (`changed: false`): a replay, or a payment that failed
 * or was reversed before this event arrived.
 */
export async function creditPayment(
  deps: Deps,
  provider: PaymentProvider,
  externalId: string,
  options: { fromHeld?: boolean } = {},
): Promise<Outcome | undefined> {
  const from: PaymentState[] = options.fromHeld ? ['held'] : ['pending']
  const done = await deps.sql.begin(async (tx) => {
    const [row] = await tx<Row[]>`
      SELECT * FROM payments WHERE provider = ${provider} AND external_id = ${externalId} FOR UPDATE`
    if (!row) return undefined
    if (!from.includes(row.state)) return { row, entryId: undefined }
    if (await wouldOverflow(tx, row.account_id, row.amount_nano)) {
      const message = `Payment ${row.id} of ${nanoToUsd(row.amount_nano)} USD would take the balance of ${row.account_id} past ${nanoToUsd(Number.MAX_SAFE_INTEGER)} USD, the most an account can hold.`
      if (options.fromHeld) throw new ServiceError('conflict', message)
      // Held for the operator (payments release once the balance has room, or reject): never lost,
      // never past what a balance holds.
      log.warn('a payment past the most a balance can hold: held for the operator', {
        paymentId: row.id,
        accountId: row.account_id,
      })
      const [held] = await tx<Row[]>`
        UPDATE payments SET state = 'held', updated_at = now() WHERE id = ${row.id} RETURNING *`
      return { row: held!, entryId: undefined }
    }
    const entryId = `${row.id}:credit`
    await tx`
      INSERT INTO ledger (account_id, request_id, kind, amount_nano, reason)
      VALUES (${row.account_id}, ${entryId}, 'credit', ${row.amount_nano}, ${`payment ${provider} ${externalId}`})`
    const [updated] = await tx<Row[]>`
      UPDATE payments SET state = 'credited', credit_entry_id = ${entryId}, updated_at = now()
      WHERE id = ${row.id} RETURNING *`
    return { row: updated!, entryId }
  })
  if (!done) return undefined
  if (done.entryId)
    await applyToBalance(deps, done.row.account_id, done.entryId, done.row.amount_nano)
  return { payment: view(done.row), changed: done.entryId !== undefined }
}

/**
 * Takes a payment back: a credited one gets an adjustment entry of its negative amount and becomes
 * reversed; a pending or held one becomes failed (nothing was credited). Reversing twice changes nothing.
 */
export async function reversePayment(
  deps: Deps,
  provider: PaymentProvider,
  externalId: string,
  reason: string,
): Promise<Outcome | undefined> {
  const done = await deps.sql.begin(async (tx) => {
    const [row] = await tx<Row[]>`
      SELECT * FROM payments WHERE provider = ${provider} AND external_id = ${externalId} FOR UPDATE`
    if (!row) return undefined
    if (row.state === 'pending' || row.state === 'held') {
      const [failed] = await tx<Row[]>`
        UPDATE payments SET state = 'failed', updated_at = now() WHERE id = ${row.id} RETURNING *`
      return { row: failed!, entryId: undefined, changed: true }
    }
    if (row.state !== 'credited') return { row, entryId: undefined, changed: false }
    const entryId = `${row.id}:reversal`
    await tx`
      INSERT INTO ledger (account_id, request_id, kind, amount_nano, reason)
      VALUES (${row.account_id}, ${entryId}, 'adjustment', ${-row.amount_nano}, ${reason})`
    const [updated] = await tx<Row[]>`
      UPDATE payments SET state = 'reversed', reversal_entry_id = ${entryId}, updated_at = now()
      WHERE id = ${row.id} RETURNING *`
    return { row: updated!, entryId, changed: true }
  })
  if (!done) return undefined
  if (done.entryId)
    await applyToBalance(deps, done.row.account_id, done.entryId, -done.row.amount_nano)
  return { payment: view(done.row), changed: done.changed }
}

/** Marks a pending payment failed (a checkout that expired or was declined; with `fromHeld`, a held one the operator rejects). */
export async function failPayment(
  sql: Sql,
  provider: PaymentProvider,
  externalId: string,
  options: { fromHeld?: boolean } = {},
): Promise<Payment | undefined> {
  const from: PaymentState = options.fromHeld ? 'held' : 'pending'
  const [row] = await sql<Row[]>`
    UPDATE payments SET state = 'failed', updated_at = now()
    WHERE provider = ${provider} AND external_id = ${externalId} AND state = ${from}
    RETURNING *`
  return row ? view(row) : findPayment(sql, provider, externalId)
}

/** Payments for the operator, newest first: in a state, of an account, or all. */
export async function findPayments(
  sql: Sql,
  filter: { state?: PaymentState; accountId?: string },
  limit = 100,
): Promise<Payment[]> {
  const rows = await sql<Row[]>`
    SELECT * FROM payments
    WHERE (${filter.state ?? null}::text IS NULL OR state = ${filter.state ?? null})
      AND (${filter.accountId ?? null}::text IS NULL OR account_id = ${filter.accountId ?? null})
    ORDER BY created_at DESC, id LIMIT ${limit}`
  return rows.map(view)
}

/**
 * The operator's decision on a held payment (a sanctions-screening hit, a card session paid in another
 * amount or currency, a payment past the most a balance holds): `release` credits it, `reject`
 * fails it. A payment that is not held → 409, naming its state.
 */
export async function decideHeld(
  deps: Deps,
  paymentId: string,
  decision: 'release' | 'reject',
): Promise<Payment> {
  const [row] = await deps.sql<Row[]>`SELECT * FROM payments WHERE id = ${paymentId}`
  if (!row) throw new ServiceError('not_found', `No payment ${paymentId}.`)
  if (row.state !== 'held')
    throw new ServiceError('conflict', `Payment ${paymentId} is ${row.state}, not held.`)
  if (decision === 'release') {
    const outcome = await creditPayment(deps, row.provider, row.external_id, { fromHeld: true })
    return outcome!.payment
  }
  return (await failPayment(deps.sql, row.provider, row.external_id, { fromHeld: true }))!
}

/** Holds a pending payment uncredited for the operator (a sanctions-screening hit, a mismatched card payment). */
export async function holdPayment(
  sql: Sql,
  provider: PaymentProvider,
  externalId: string,
): Promise<Payment | undefined> {
  const [row] = await sql<Row[]>`
    UPDATE payments SET state = 'held', updated_at = now()
    WHERE provider = ${provider} AND external_id = ${externalId} AND state = 'pending'
    RETURNING *`
  return row ? view(row) : findPayment(sql, provider, externalId)
}
