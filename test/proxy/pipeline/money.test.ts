// Money under concurrency, on both admission stores: admission never over-commits the balance or a spend
// cap, every hold ends, and the balance always equals the sum of the ledger.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { nanoToUsd } from '../../../shared/money.ts'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { settledAccount, sumOf } from '../../helpers/ledger.ts'
import { describeWith } from '../../helpers/services.ts'
import { storeSetups } from '../../helpers/setups.ts'

// Answers slowly enough that every admission happens while the first holds are still open.
const models = [
  testModel('test/slow', 'fake?delay=1000'),
  testModel('test/stream', 'fake?tokens=20&chunkDelay=30'),
]

/** The hold of a body on test models: (body bytes + 8 per message) × 1,000 + max_tokens × 2,000 nano. */
const holdOf = (body: { messages: unknown[]; max_tokens: number }) =>
  (JSON.stringify(body).length + 8 * body.messages.length) * 1_000 + body.max_tokens * 2_000

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `money with the ${store} admission store on ${database} Postgres`,
    () => {
      let gw: TestGateway
      beforeAll(async () => {
        gw = await startTestGateway({
          store,
          database,
          models,
          env: { ACCOUNT_CONCURRENCY_LIMIT: '0', ACCOUNT_RPM_LIMIT: '0' },
        })
      })
      afterAll(() => gw.close())

      test('500 concurrent requests against a balance for exactly 100 holds: exactly 100 admitted', async () => {
        const body = {
          model: 'test/slow',
          messages: [{ role: 'user', content: 'hello' }],
          max_tokens: 10,
        }
        const hold = holdOf(body)
        const accountId = await gw.account(nanoToUsd(100 * hold))
        const { key } = await gw.key(accountId)
        const responses = await Promise.all(Array.from({ length: 500 }, () => gw.chat(key, body)))
        const statuses = responses.map((response) => response.status)
        expect(statuses.filter((status) => status === 200)).toHaveLength(100)
        expect(statuses.filter((status) => status === 402)).toHaveLength(400)

        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
        expect(ledger.filter((row) => row.kind === 'charge')).toHaveLength(100)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
        expect(snapshot.balanceNano).toBeGreaterThanOrEqual(0)
        const charged = await Promise.all(
          responses
            .filter((response) => response.ok)
            .map((response) => response.json() as Promise<{ usage: { cost: number } }>),
        )
        const chargedNano = ledger
          .filter((row) => row.kind === 'charge')
          .reduce((sum, row) => sum - row.amount_nano, 0)
        expect(Number(charged.reduce((sum, answer) => sum + answer.usage.cost, 0).toFixed(9))).toBe(
          Number(nanoToUsd(chargedNano)),
        )
      })

      test('a daily cap holds under concurrent streams, with open holds counted', async () => {
        const body = {
          model: 'test/stream',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 30,
          stream: true,
        }
        const hold = holdOf(body)
        const accountId = await gw.account('100')
        const cap = 10 * hold
        const { id: keyId, key } = await gw.key(accountId, { dailyLimitNano: cap })
        const responses = await Promise.all(Array.from({ length: 50 }, () => gw.chat(key, body)))
        const statuses = responses.map((response) => response.status)
        expect(statuses.filter((status) => status === 200)).toHaveLength(10)
        expect(statuses.filter((status) => status === 403)).toHaveLength(40)
        for (const response of responses) {
          if (response.ok) expect(await response.text()).toEndWith('data: [DONE]\n\n')
          else expect(response.headers.get('x-service-error-code')).toBe('spend_limit_exceeded')
        }
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        const key_ = snapshot.keys.find((entry) => entry.keyId === keyId)!
        const spent = ledger
          .filter((row) => row.kind === 'charge')
          .reduce((sum, row) => sum - row.amount_nano, 0)
        expect(key_.daySpentNano).toBe(spent)
        expect(spent).toBeLessThanOrEqual(cap)
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
      })
    },
  )
}

describe('hold sizes', () => {
  test('the hold formula used above matches the estimate stage', async () => {
    const { estimate } = await import('../../../proxy/pipeline/estimate.ts')
    const { buildCatalog } = await import('../../../proxy/core/catalog/catalog.ts')
    const catalog = buildCatalog(
      {
        providers: [{ id: 'fake', style: 'openai', baseUrl: 'http://127.0.0.1:1', apiKeyEnv: 'K' }],
        models,
      },
      {},
    )
    const model = catalog.models.get('test/slow')!
    const body = {
      model: 'test/slow',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 10,
    }
    const bytes = JSON.stringify(body).length
    expect(
      estimate([{ model, routes: model.routes }], { textBytes: bytes, images: 0, messages: 1 }, 10)
        .holdNano,
    ).toBe(holdOf(body))
  })
})
