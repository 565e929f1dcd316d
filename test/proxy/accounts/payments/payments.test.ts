// Payments on every store setup: a payment is credited at most once however often (and however
// concurrently) its event arrives, a reversal takes it back once, and the ledger equals the balance after
// each step.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  creditPayment,
  decideHeld,
  failPayment,
  listPayments,
  recordPayment,
  reversePayment,
} from '../../../../proxy/accounts/payments/payments.ts'
import { runMaintenance } from '../../../../proxy/ops/maintenance.ts'
import { loadAccount } from '../../../../proxy/stores/admission/load-account.ts'
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.ts'
import { settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'
import { storeSetups } from '../../../helpers/setups.ts'

const USD = 1_000_000_000

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `payments with the ${store} admission store on ${database} Postgres`,
    () => {
      let gw: TestGateway
      beforeAll(async () => {
        gw = await startTestGateway({ store, database })
      })
      afterAll(() => gw.close())

      const deps = () => ({ sql: gw.app.gateway.sql, store: gw.app.gateway.store })
      const pending = async (accountId: string, amountNano: number) =>
        recordPayment(gw.app.gateway.sql, {
          accountId,
          provider: 'stripe',
          externalId: uniqueName('cs_test_'),
          amountNano,
          currency: 'usd',
        })

      test('a thousand concurrent deliveries of the same payment credit it once', async () => {
        const accountId = await gw.account('0')
        const payment = await pending(accountId, 20 * USD)
        const outcomes = await Promise.all(
          Array.from({ length: 1_000 }, () => creditPayment(deps(), 'stripe', payment.externalId)),
        )
        // The same for a chain transfer, read by many watchers at once.
        const transfer = await recordPayment(gw.app.gateway.sql, {
          accountId,
          provider: 'chain',
          externalId: uniqueName('31337:0xtransfer:'),
          amountNano: 5 * USD,
          currency: 'USDC',
        })
        const transfers = await Promise.all(
          Array.from({ length: 1_000 }, () => creditPayment(deps(), 'chain', transfer.externalId)),
        )
        expect(transfers.filter((outcome) => outcome?.changed)).toHaveLength(1)
        expect(outcomes.filter((outcome) => outcome?.changed)).toHaveLength(1)
        expect(outcomes.every((outcome) => outcome?.payment.state === 'credited')).toBe(true)
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(ledger.filter((row) => row.kind === 'credit')).toHaveLength(2)
        expect(snapshot.balanceNano).toBe(25 * USD)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
        // Recording the same payment again returns the first record.
        const again = await recordPayment(gw.app.gateway.sql, {
          accountId,
          provider: 'stripe',
          externalId: payment.externalId,
          amountNano: 1,
          currency: 'usd',
        })
        expect(again).toMatchObject({ id: payment.id, amountNano: 20 * USD, state: 'credited' })
      })

      test('a reversal takes a credited payment back once; the balance may go below zero, and requests stop', async () => {
        const accountId = await gw.account('0')
        const payment = await pending(accountId, 1 * USD)
        await creditPayment(deps(), 'stripe', payment.externalId)
        const { key } = await gw.key(accountId)
        const spent = await gw.chat(key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 10,
        })
        expect(spent.status).toBe(200)
        await spent.arrayBuffer()

        const reversals = await Promise.all(
          Array.from({ length: 20 }, () =>
            reversePayment(deps(), 'stripe', payment.externalId, 'refund'),
          ),
        )
        expect(reversals.filter((outcome) => outcome?.changed)).toHaveLength(1)
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(ledger.filter((row) => row.kind === 'adjustment')).toMatchObject([
          { amount_nano: -1 * USD, reason: 'refund' },
        ])
        expect(snapshot.balanceNano).toBeLessThan(0)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))

        const refused = await gw.chat(key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 10,
        })
        expect(refused.status).toBe(402)
        // A credit after it is a payment of its own; this one stays reversed.
        expect((await creditPayment(deps(), 'stripe', payment.externalId))?.changed).toBe(false)
      })

      test('a credit the live balance missed while the admission store did not answer is applied later, also after a long outage', async () => {
        const accountId = await gw.account('0')
        const { sql, store, inflight } = gw.app.gateway
        await loadAccount(sql, store, accountId)
        const unreachable = new Proxy(store, {
          get: (target, name) =>
            name === 'credit'
              ? () => Promise.reject(new Error('admission store unreachable'))
              : Reflect.get(target, name).bind(target),
        })
        const payment = await pending(accountId, 3 * USD)
        // The payment is credited in Postgres; its live credit does not arrive.
        const lost = await creditPayment(
          { sql, store: unreachable },
          'stripe',
          payment.externalId,
        ).catch((error: Error) => error)
        expect((lost as Error).message).toContain('unreachable')
        // Another payment whose live credit was lost an hour before the store answered again.
        const earlier = await pending(accountId, 2 * USD)
        await sql.begin(async (tx) => {
          await tx`
            INSERT INTO ledger (account_id, request_id, kind, amount_nano, reason, created_at)
            VALUES (${accountId}, ${`${earlier.id}:credit`}, 'credit', ${2 * USD}, 'payment', now() - interval '1 hour')`
          await tx`
            UPDATE payments SET state = 'credited', credit_entry_id = ${`${earlier.id}:credit`}
            WHERE id = ${earlier.id}`
        })
        expect((await store.snapshot(accountId)).balanceNano).toBe(0)
        // The store answers again: the maintenance round of a process that has not looked at the whole
        // day yet (its first) applies both, and a round after it applies nothing again.
        const answering = new Proxy(store, {
          get: (target, name) => Reflect.get(target, name).bind(target),
        })
        await runMaintenance({ sql, store: answering, inflight })
        await runMaintenance({ sql, store: answering, inflight })
        await runMaintenance({ sql, store, inflight })
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot.balanceNano).toBe(5 * USD)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
      })

      test('a payment that would take the balance past the most it can hold is held for the operator, not credited', async () => {
        const accountId = await gw.account('0')
        const payments = await Promise.all([5, 5].map(() => pending(accountId, 5_000_000 * USD)))
        const outcomes = await Promise.all(
          payments.map((payment) => creditPayment(deps(), 'stripe', payment.externalId)),
        )
        expect(outcomes.map((outcome) => outcome?.payment.state).sort()).toEqual([
          'credited',
          'held',
        ])
        const held = outcomes.find((outcome) => outcome?.payment.state === 'held')!.payment
        const refused = await decideHeld(deps(), held.id, 'release').catch((error) => error)
        expect(refused).toMatchObject({ code: 'conflict' })
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot.balanceNano).toBe(5_000_000 * USD)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
        expect((await decideHeld(deps(), held.id, 'reject')).state).toBe('failed')
      })

      test('a payment that never succeeded is never credited; an unknown one changes nothing', async () => {
        const accountId = await gw.account('0')
        const payment = await pending(accountId, 5 * USD)
        expect(await failPayment(gw.app.gateway.sql, 'stripe', payment.externalId)).toMatchObject({
          state: 'failed',
        })
        expect((await creditPayment(deps(), 'stripe', payment.externalId))?.changed).toBe(false)
        expect(await creditPayment(deps(), 'stripe', 'cs_unknown')).toBeUndefined()
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot.balanceNano).toBe(0)
        expect(ledger).toHaveLength(0)
        expect((await listPayments(gw.app.gateway.sql, accountId)).map((p) => p.state)).toEqual([
          'failed',
        ])
      })
    },
  )
}
