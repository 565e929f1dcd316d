// The stop at the hold (spec: "a stream stopped mid-way, message names cost of delivered tokens"): a
// provider that ignores the output limit is cut where the cost of what was delivered would pass the
// request's hold, in every client style and for both provider styles, and the ledger charges exactly the
// cost the message names; a provider that honours a small limit is never cut, however long its tokens.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { usdToNano } from '../../../../shared/money.ts'
import {
  readChatStream,
  readMessagesStream,
  readResponsesStream,
  type Summary,
} from '../../../helpers/client-streams.ts'
import { LONG_WORDS } from '../../../helpers/fake-upstream/plan.ts'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { ledgerOf, settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { describeWith } from '../../../helpers/services.ts'
import { storeSetups } from '../../../helpers/setups.ts'

/** The output limit every request sets (the Responses style's smallest). */
const LIMIT = 16
const o200k = { tokenizer: 'o200k_base' as const }
const models = [
  testModel('openai/ignores', 'fake?tokens=300&vocab=long', o200k),
  testModel('openai/ignores-no-tokenizer', 'fake?tokens=300&vocab=long'),
  anthropicTestModel('anthropic/ignores', 'fake?tokens=300&vocab=long'),
  testModel('openai/honours', 'fake?tokens=300&vocab=long&honour=1', o200k),
  testModel('openai/honours-no-tokenizer', 'fake?tokens=300&vocab=long&honour=1'),
  anthropicTestModel('anthropic/honours', 'fake?tokens=300&vocab=long&honour=1'),
]
/** The test catalog's prices: USD 1 and 2 per million tokens. */
const costOf = (input: number, output: number) => input * 1_000 + output * 2_000

const styles = {
  chat: {
    path: 'chat/completions',
    body: (model: string) => ({
      model,
      messages: [{ role: 'user', content: 'Tell me everything.' }],
      max_completion_tokens: LIMIT,
      stream: true,
      stream_options: { include_usage: true },
    }),
    read: readChatStream,
    ends: ['[DONE]'],
  },
  messages: {
    path: 'messages',
    body: (model: string) => ({
      model,
      max_tokens: LIMIT,
      messages: [{ role: 'user', content: 'Tell me everything.' }],
      stream: true,
    }),
    read: readMessagesStream,
    ends: ['message_stop'],
  },
  responses: {
    path: 'responses',
    body: (model: string) => ({
      model,
      input: 'Tell me everything.',
      max_output_tokens: LIMIT,
      stream: true,
      store: false,
    }),
    read: readResponsesStream,
    ends: ['completed', 'incomplete'],
  },
}

const wordsIn = (text: string) => text.split(' ').filter(Boolean).length

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `the stop at the hold with the ${store} admission store on ${database} Postgres`,
    () => {
      let gw: TestGateway
      let apiUrl: string
      beforeAll(async () => {
        gw = await startTestGateway({ store, database, models })
        apiUrl = gw.app.listen().apiUrl
      })
      afterAll(() => gw.close())

      /** Streams one request on a fresh account of USD 10; returns what the client read and what was recorded. */
      async function stream(style: keyof typeof styles, model: string) {
        const accountId = await gw.account('10')
        const { key } = await gw.key(accountId)
        const response = await fetch(`${apiUrl}/v1/${styles[style].path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
          },
          body: JSON.stringify(styles[style].body(model)),
        })
        expect(response.status).toBe(200)
        // The balance header is read when the stream starts: the credit less this request's hold.
        const holdNano =
          usdToNano('10')! - usdToNano(response.headers.get('x-service-balance-usd')!)!
        const summary: Summary = styles[style].read(await response.text())
        const requestId = response.headers.get('x-request-id')!
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
        const [log] = await gw.app.gateway.sql<
          {
            status: number
            error_code: string | null
            input_tokens: number
            output_tokens: number
            charged_nano: number
          }[]
        >`
        SELECT status, error_code, input_tokens, output_tokens, charged_nano FROM request_logs WHERE request_id = ${requestId}`
        const rows = (await ledgerOf(gw, accountId)).filter((row) => row.request_id === requestId)
        return { summary, holdNano, log: log!, rows, delivered: wordsIn(summary.text) }
      }

      for (const style of ['chat', 'messages', 'responses'] as const) {
        for (const model of [
          'openai/ignores',
          'openai/ignores-no-tokenizer',
          'anthropic/ignores',
        ]) {
          test(`${style} client, ${model}: cut at the hold with insufficient_credits naming the delivered cost, which the ledger charges`, async () => {
            const { summary, holdNano, log, rows, delivered } = await stream(style, model)
            expect(summary.error).toBe('insufficient_credits')
            for (const end of styles[style].ends) expect(summary.kinds).not.toContain(end)
            // The hold covers the output limit: a stop there is the provider's overrun, not a lack of credit.
            expect(summary.errorMessage).toContain('the provider went on past the limit')
            const named = /charged \$(\d+(?:\.\d+)?)/.exec(summary.errorMessage!)?.[1]
            expect(named).toBeDefined()
            const chargedNano = usdToNano(named!)!
            expect(rows.map((row) => [row.kind, row.amount_nano])).toEqual([
              ['charge', -chargedNano],
            ])
            expect(log).toMatchObject({
              status: 402,
              error_code: 'insufficient_credits',
              charged_nano: chargedNano,
              output_tokens: delivered,
            })
            expect(chargedNano).toBe(costOf(log.input_tokens, delivered))
            expect(chargedNano).toBeLessThanOrEqual(holdNano)
            if (model.startsWith('anthropic/')) {
              // The provider reported its input first: the hold's room beside it goes to output, to the last token that fits.
              expect(costOf(log.input_tokens, delivered + 1)).toBeGreaterThan(holdNano)
            } else {
              // Input unknown until the end: the hold's bound on it stands, so exactly the requested output fits.
              expect(delivered).toBe(LIMIT)
            }
          })
        }
        for (const model of [
          'openai/honours',
          'openai/honours-no-tokenizer',
          'anthropic/honours',
        ]) {
          test(`${style} client, ${model}: a provider within the output limit is never cut, however long its tokens`, async () => {
            const { summary, log, rows, delivered } = await stream(style, model)
            expect(summary.error).toBeNull()
            expect(summary.kinds.at(-1)).toBe(styles[style].ends.at(-1)!)
            expect(delivered).toBe(LIMIT)
            expect(summary.text).toBe(LONG_WORDS.concat(LONG_WORDS).slice(0, LIMIT).join(''))
            expect(log).toMatchObject({ status: 200, output_tokens: LIMIT })
            expect(rows.map((row) => [row.kind, row.amount_nano])).toEqual([
              ['charge', -costOf(log.input_tokens, LIMIT)],
            ])
          })
        }
      }
    },
  )
}
