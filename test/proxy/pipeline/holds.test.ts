// Every hold ends exactly once, whatever happens to the request: settled, released, or expired.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { runMaintenance } from '../../../proxy/ops/maintenance.ts'
import {
  anthropicTestModel,
  readEvents,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../helpers/gateway.ts'
import { ledgerOf, settledAccount, sumOf } from '../../helpers/ledger.ts'
import { usdToNano } from '../../../shared/money.ts'
import { describeWith } from '../../helpers/services.ts'
import { storeSetups } from '../../helpers/setups.ts'

const models = [
  testModel('test/long', 'fake?tokens=400&chunkDelay=5'),
  testModel('test/drop-first', 'fake?dropFirst=1'),
  testModel('test/break-early', 'fake?tokens=100&break=3'),
  testModel('test/break-late', 'fake?tokens=100&break=60'),
  testModel('test/no-usage', 'fake?tokens=8&nousage=1'),
  anthropicTestModel('test/no-usage-messages', 'fake?tokens=8&nousage=1'),
  // Reports 500 input tokens for a prompt of a few hundred bytes: the tool-use prompt the provider adds.
  anthropicTestModel('test/tool-prompt', 'fake?tools=1&prompt=500'),
  // A provider's bug: usage of 10^15 input tokens.
  testModel('test/absurd-usage', 'fake?tokens=4&prompt=1e15'),
]
const hello = [{ role: 'user', content: 'hello' }]
/** The text of a chat stream's content deltas. */
const deliveredText = (events: string[]) =>
  events
    .filter((event) => event.startsWith('{'))
    .map((event) => JSON.parse(event).choices?.[0]?.delta?.content ?? '')
    .join('')

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `holds with the ${store} admission store on ${database} Postgres`,
    () => {
      let gw: TestGateway
      let accountId: string
      let key: string
      let apiUrl: string
      beforeAll(async () => {
        gw = await startTestGateway({ store, database, models })
        apiUrl = gw.app.listen().apiUrl
        accountId = await gw.account('10')
        key = (await gw.key(accountId)).key
      })
      afterAll(() => gw.close())

      const rowsOf = async (requestId: string) =>
        (await ledgerOf(gw, accountId)).filter((row) => row.request_id === requestId)
      const logOf = async (requestId: string) => {
        await gw.app.gateway.writer.drain()
        const [row] = await gw.app.gateway.sql<
          {
            status: number
            error_code: string | null
            output_tokens: number
            charged_nano: number
          }[]
        >`
        SELECT status, error_code, output_tokens, charged_nano FROM request_logs WHERE request_id = ${requestId}`
        return row
      }
      const balanced = async () => {
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
      }

      test('a client that disconnects mid-stream stops the upstream and pays for what it was sent', async () => {
        const aborted = gw.upstream.abortedStreams
        const controller = new AbortController()
        const response = await fetch(`${apiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/long', messages: hello, stream: true }),
          signal: controller.signal,
        })
        const requestId = response.headers.get('x-request-id')!
        const reader = response.body!.getReader()
        let received = ''
        while (received.split('"content":"w').length < 12)
          received += new TextDecoder().decode((await reader.read()).value)
        controller.abort()
        await balanced()
        const until = Date.now() + 2_000
        while (gw.upstream.abortedStreams === aborted && Date.now() < until) await Bun.sleep(20)
        expect(gw.upstream.abortedStreams).toBe(aborted + 1)
        const rows = await rowsOf(requestId)
        expect(rows.map((row) => row.kind)).toEqual(['charge'])
        expect(rows[0]!.amount_nano).toBeLessThan(0)
        const log = await logOf(requestId)
        expect(log).toMatchObject({ status: 499 })
        expect(log!.output_tokens).toBeGreaterThanOrEqual(11)
        expect(log!.output_tokens).toBeLessThan(400)
      })

      test('a stream that offers tools is held for the provider’s tool-use prompt, so it is not stopped at its hold', async () => {
        const response = await gw.chat(key, {
          model: 'test/tool-prompt',
          messages: hello,
          max_tokens: 16,
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: {} } }],
          stream: true,
          stream_options: { include_usage: true },
        })
        const requestId = response.headers.get('x-request-id')!
        const chunks = (await readEvents(response))
          .filter((event) => event.startsWith('{'))
          .map((event) => JSON.parse(event))
        expect(chunks.some((chunk) => chunk.error)).toBe(false)
        const usage = chunks.at(-1).usage
        expect(usage.prompt_tokens).toBe(500)
        await balanced()
        const rows = await rowsOf(requestId)
        expect(rows.map((row) => row.amount_nano)).toEqual([-usdToNano(usage.cost)!])
      })

      test('a provider usage of more tokens than the model can take is replaced by the gateway’s count, and records stay writable', async () => {
        for (const stream of [false, true]) {
          const response = await gw.chat(key, {
            model: 'test/absurd-usage',
            messages: hello,
            stream,
            stream_options: stream ? { include_usage: true } : undefined,
          })
          expect(response.status).toBe(200)
          const requestId = response.headers.get('x-request-id')!
          const usage = stream
            ? JSON.parse((await readEvents(response)).at(-2)!).usage
            : ((await response.json()) as { usage: { prompt_tokens: number } }).usage
          expect(usage.prompt_tokens).toBeLessThan(100)
          await balanced()
          expect((await rowsOf(requestId)).map((row) => row.amount_nano)).toEqual([
            -usdToNano(usage.cost)!,
          ])
          expect(await logOf(requestId)).toMatchObject({
            status: 200,
            output_tokens: usage.completion_tokens,
          })
        }
        // Nothing of the bogus count stayed on the account's tokens per minute.
        expect((await gw.chat(key, { model: 'test/absurd-usage', messages: hello })).status).toBe(
          200,
        )
      })

      test('an upstream that breaks before the first byte leaves no charge', async () => {
        const response = await gw.chat(key, {
          model: 'test/drop-first',
          messages: hello,
          stream: true,
        })
        expect(response.status).toBe(503)
        expect(response.headers.get('x-service-error-code')).toBe('model_unavailable')
        expect(await rowsOf(response.headers.get('x-request-id')!)).toEqual([])
        await balanced()
      })

      test('an upstream that breaks after under 50 tokens is written off, with a ledger row saying so', async () => {
        const response = await gw.chat(key, {
          model: 'test/break-early',
          messages: hello,
          stream: true,
        })
        const events = await readEvents(response)
        expect(JSON.parse(events.at(-1)!).error.code).toBe('upstream_error')
        const requestId = response.headers.get('x-request-id')!
        await balanced()
        const rows = await rowsOf(requestId)
        expect(rows.map((row) => [row.kind, row.amount_nano, row.reason])).toEqual([
          ['writeoff', 0, 'stream_broken_early'],
        ])
        expect(rows[0]!.written_off_nano).toBeGreaterThan(0)
        expect(await logOf(requestId)).toMatchObject({
          status: 502,
          error_code: 'upstream_error',
          charged_nano: 0,
        })
      })

      test('an upstream that breaks after 50 tokens charges the delivered tokens only', async () => {
        const response = await gw.chat(key, {
          model: 'test/break-late',
          messages: hello,
          stream: true,
        })
        const events = await readEvents(response)
        expect(JSON.parse(events.at(-1)!).error.code).toBe('upstream_error')
        const requestId = response.headers.get('x-request-id')!
        await balanced()
        const rows = await rowsOf(requestId)
        expect(rows.map((row) => row.kind)).toEqual(['charge'])
        const log = await logOf(requestId)
        // Without usage from the provider, the delivered text is counted: by o200k_base for a model whose
        // catalog entry names no tokenizer of its own, and never below one token per delta.
        expect(log!.output_tokens).toBe(Math.max(60, countTokens(deliveredText(events))))
        expect(-rows[0]!.amount_nano).toBe(log!.charged_nano)
      })

      test('a stream whose provider reports no usage is charged by the gateway’s count, and the client still gets usage', async () => {
        const response = await gw.chat(key, {
          model: 'test/no-usage',
          messages: hello,
          stream: true,
          stream_options: { include_usage: true },
        })
        const events = await readEvents(response)
        expect(events.at(-1)).toBe('[DONE]')
        const usage = JSON.parse(events.at(-2)!).usage
        expect(usage.completion_tokens).toBe(Math.max(8, countTokens(deliveredText(events))))
        expect(usage.cost).toBeGreaterThan(0)
        await balanced()
      })

      test('a provider that reports no usage: the input is charged by the tokenizer’s count of the prompt, not its size', async () => {
        // 150 tokens of text in 900 bytes: a count by size would say 225 and more.
        const text = '数据'.repeat(150)
        const framing = 8 // the gateway's allowance per message
        for (const stream of [false, true]) {
          const response = await gw.chat(key, {
            model: 'test/no-usage',
            messages: [{ role: 'user', content: text }],
            ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
          })
          expect(response.status).toBe(200)
          const usage = stream
            ? JSON.parse((await readEvents(response)).at(-2)!).usage
            : ((await response.json()) as { usage: { prompt_tokens: number } }).usage
          expect(usage.prompt_tokens).toBe(countTokens(text) + framing)
        }
        await balanced()
      })

      test('a provider that reports no usage, with tools: the tool-use prompt is counted only for a Messages-style provider', async () => {
        const text = 'What is the weather in Paris?'
        const tools = [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'The weather in a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ]
        const framing = 8 // the gateway's allowance per message
        const toolPrompt = 600 // the largest tool-use prompt a Messages-style provider adds
        const counted = countTokens(text) + countTokens(JSON.stringify(tools)) + framing
        for (const [model, expected] of [
          ['test/no-usage', counted],
          ['test/no-usage-messages', counted + toolPrompt],
        ] as const) {
          for (const stream of [false, true]) {
            const response = await gw.chat(key, {
              model,
              messages: [{ role: 'user', content: text }],
              tools,
              ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
            })
            expect(response.status).toBe(200)
            const usage = stream
              ? JSON.parse((await readEvents(response)).at(-2)!).usage
              : ((await response.json()) as { usage: { prompt_tokens: number } }).usage
            expect({ model, stream, input: usage.prompt_tokens }).toEqual({
              model,
              stream,
              input: expected,
            })
          }
        }
        await balanced()
      })

      test('a hold whose settlement never comes expires at its deadline and charges nothing', async () => {
        const short = await startTestGateway({
          store,
          database,
          models,
          env: { HOLD_DEADLINE_MS: '200' },
        })
        try {
          const account = await short.account('1')
          const { id: keyId } = await short.key(account)
          const { store: admission, sql, inflight } = short.app.gateway
          const admitted = await admission.admit({
            requestId: 'req_orphan',
            accountId: account,
            keyId,
            holdNano: 5_000,
            tokens: 10,
            keyLimits: { rpm: 0, tpm: 0, concurrency: 0, dailyNano: 0, monthlyNano: 0 },
            accountLimits: { rpm: 0, tpm: 0, concurrency: 0 },
          })
          if (!admitted.ok) throw new Error('expected the admission to pass')
          await Bun.sleep(300)
          for (let i = 0; i < 20 && (await admission.snapshot(account)).inFlight > 0; i++) {
            await runMaintenance({ sql, store: admission, inflight })
            await Bun.sleep(100)
          }
          expect(await admission.snapshot(account)).toMatchObject({
            heldNano: 0,
            inFlight: 0,
            balanceNano: 1_000_000_000,
          })
          expect(
            await admission.settle({
              requestId: 'req_orphan',
              accountId: account,
              costNano: 10,
              tokens: 1,
              forgive: false,
            }),
          ).toMatchObject({ status: 'missing' })
          expect((await admission.snapshot(account)).balanceNano).toBe(1_000_000_000)
        } finally {
          await short.close()
        }
      })
    },
  )
}
