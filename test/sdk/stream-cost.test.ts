// Cost on streams, read with the official SDKs: every streamed response carries the balance, model and
// provider headers, and the final cost where the client style allows it (Chat Completions: the usage
// chunk, only with stream_options.include_usage; Responses: response.completed; Messages: the final
// message_delta). The charge recorded for the request is the cost the client was told, to the nano-USD.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { usdToNano } from '../../shared/money.ts'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { settledAccount, sumOf } from '../helpers/ledger.ts'
import { describeWith } from '../helpers/services.ts'

const models = [
  testModel('openai/reports', 'fake?tokens=7&cached=3', {
    pricing: { inputPerMTok: 1.25, outputPerMTok: 10, cachedInputPerMTok: 0.125 },
  }),
  testModel('openai/silent', 'fake?tokens=9&nousage=1', {
    pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  }),
  anthropicTestModel('anthropic/reports', 'fake?tokens=7&cached=3&cacheWrite=2', {
    pricing: {
      inputPerMTok: 3,
      outputPerMTok: 15,
      cachedInputPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
    },
  }),
  anthropicTestModel('anthropic/silent', 'fake?tokens=9&nousage=1', {
    pricing: { inputPerMTok: 0.8, outputPerMTok: 4 },
  }),
  anthropicTestModel(
    'anthropic/hour-cache',
    'fake?tokens=5&prompt=40&cacheWrite=30&cacheWriteHour=20',
    {
      pricing: {
        inputPerMTok: 3,
        outputPerMTok: 15,
        cacheWritePerMTok: 3.75,
        cacheWrite1hPerMTok: 6,
      },
    },
  ),
  anthropicTestModel('anthropic/web-search', 'fake?replay=anthropic/web-search', {
    pricing: { inputPerMTok: 3, outputPerMTok: 15, webSearchPerThousand: 10 },
  }),
  anthropicTestModel('anthropic/tool-fragments', 'fake?replay=anthropic/tool-fragments', {
    pricing: { inputPerMTok: 3, outputPerMTok: 15 },
  }),
  testModel('openai/prompt-filter-first', 'fake?replay=openai/prompt-filter-first', {
    pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  }),
  testModel('openai/breaks-late', 'fake?tokens=80&break=60', {
    pricing: { inputPerMTok: 1, outputPerMTok: 10 },
  }),
  testModel('openai/breaks-early', 'fake?tokens=80&break=5', {
    pricing: { inputPerMTok: 1, outputPerMTok: 10 },
  }),
]

/** The cost a client read from the stream (USD, as sent), and the response's headers. */
type Told = { costUsd: number | undefined; headers: Headers; requestId: string }

describeWith('postgres', 'cost on streams', () => {
  let gw: TestGateway
  let openai: OpenAI
  let anthropic: Anthropic
  let accountId: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    accountId = await gw.account('10')
    const { key } = await gw.key(accountId)
    openai = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    anthropic = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  const streams = {
    async chat(model: string, includeUsage = true): Promise<Told> {
      const { data, response } = await openai.chat.completions
        .create({
          model,
          messages: [{ role: 'user', content: 'hello' }],
          stream: true,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        })
        .withResponse()
      let costUsd: number | undefined
      for await (const chunk of data)
        if (chunk.usage) costUsd = (chunk.usage as unknown as { cost: number }).cost
      return {
        costUsd,
        headers: response.headers,
        requestId: response.headers.get('x-request-id')!,
      }
    },
    async responses(model: string): Promise<Told> {
      const { data, response } = await openai.responses
        .create({ model, input: 'hello', stream: true, store: false })
        .withResponse()
      let costUsd: number | undefined
      for await (const event of data)
        if (event.type === 'response.completed')
          costUsd = (event.response.usage as unknown as { cost: number }).cost
      return {
        costUsd,
        headers: response.headers,
        requestId: response.headers.get('x-request-id')!,
      }
    },
    async messages(
      model: string,
      fields: Partial<Anthropic.MessageCreateParamsStreaming> = {},
    ): Promise<Told> {
      const { data, response } = await anthropic.messages
        .create({
          model,
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hello' }],
          ...fields,
          stream: true,
        })
        .withResponse()
      let costUsd: number | undefined
      for await (const event of data)
        if (event.type === 'message_delta')
          costUsd = (event.usage as unknown as { cost: number }).cost
      return {
        costUsd,
        headers: response.headers,
        requestId: response.headers.get('x-request-id')!,
      }
    },
  }

  const chargedFor = async (requestId: string) => {
    const { snapshot, ledger } = await settledAccount(gw, accountId)
    expect(snapshot.balanceNano).toBe(sumOf(ledger))
    const [log] = await gw.app.gateway.sql<
      { charged_nano: number; cost_nano: number }[]
    >`SELECT charged_nano, cost_nano FROM request_logs WHERE request_id = ${requestId}`
    const charge = ledger.filter((row) => row.request_id === requestId && row.kind === 'charge')
    expect(charge.map((row) => -row.amount_nano)).toEqual([log!.charged_nano])
    return log!.charged_nano
  }

  const loggedCharge = async (requestId: string) => {
    await settledAccount(gw, accountId)
    const [log] = await gw.app.gateway.sql<
      { charged_nano: number }[]
    >`SELECT charged_nano FROM request_logs WHERE request_id = ${requestId}`
    return log!.charged_nano
  }

  test('prompt-cache writes kept an hour are charged at their own price, streamed or not', async () => {
    // 10 plain input tokens at $3, 10 written for five minutes at $3.75, 20 for an hour at $6, and 5 output
    // tokens at $15, a million each.
    const expected = 10 * 3_000 + 10 * 3_750 + 20 * 6_000 + 5 * 15_000
    const told = await streams.messages('anthropic/hour-cache')
    expect(usdToNano(String(told.costUsd))).toBe(expected)
    expect(await chargedFor(told.requestId)).toBe(expected)
    const { data, response } = await anthropic.messages
      .create({
        model: 'anthropic/hour-cache',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hello' }],
      })
      .withResponse()
    expect(usdToNano(String((data.usage as unknown as { cost: number }).cost))).toBe(expected)
    expect(await chargedFor(response.headers.get('x-request-id')!)).toBe(expected)
  })

  test("the provider's own web searches are held for and charged at the model's price per thousand", async () => {
    const told = await streams.messages('anthropic/web-search', {
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
    })
    // The searches' results make the input 6,039 tokens (the prompt was 12), at $3 a million; 42 output
    // tokens at $15 a million; two searches at $10 a thousand. The hold covered it all: nothing written off.
    const expected = 6_039 * 3_000 + 42 * 15_000 + 2 * 10_000_000
    expect(usdToNano(String(told.costUsd))).toBe(expected)
    expect(await chargedFor(told.requestId)).toBe(expected)
  })

  test("a tool call's arguments streamed a character an event are charged the provider's count of the answer, in every style", async () => {
    // The provider cuts the call's 40 characters of arguments into 40 events (and sends an empty text
    // delta), then counts 20 output tokens for the answer: 310 input tokens at $3, 20 output at $15.
    const expected = 310 * 3_000 + 20 * 15_000
    for (const style of ['messages', 'chat', 'responses'] as const) {
      const told = await streams[style]('anthropic/tool-fragments')
      expect(usdToNano(String(told.costUsd))).toBe(expected)
      expect(await chargedFor(told.requestId)).toBe(expected)
    }
  })

  for (const style of ['chat', 'responses', 'messages'] as const) {
    for (const model of [
      'openai/reports',
      'openai/silent',
      'anthropic/reports',
      'anthropic/silent',
    ]) {
      test(`${style} client, ${model}: service headers on the stream, and the cost it carries is the charge to the nano`, async () => {
        const told = await streams[style](model)
        expect(told.headers.get('content-type')).toStartWith('text/event-stream')
        expect(told.headers.get('x-service-model')).toBe(model)
        expect(told.headers.get('x-service-provider')).toBe(
          model.startsWith('openai/') ? 'fake' : 'fake-anthropic',
        )
        expect(Number(told.headers.get('x-service-balance-usd'))).toBeGreaterThan(0)
        expect(told.costUsd).toBeGreaterThan(0)
        expect(await chargedFor(told.requestId)).toBe(usdToNano(String(told.costUsd))!)
      })
    }
  }

  for (const model of ['openai/silent', 'openai/prompt-filter-first'])
    test(`chat client, ${model}: the usage chunk the gateway writes carries the stream's id, created and model, so the SDK's final completion keeps its usage`, async () => {
      const params = {
        model,
        messages: [{ role: 'user' as const, content: 'hello' }],
        stream_options: { include_usage: true },
      }
      const chunks: OpenAI.ChatCompletionChunk[] = []
      for await (const chunk of await openai.chat.completions.create({ ...params, stream: true }))
        chunks.push(chunk)
      const usageChunk = chunks.at(-1)!
      const answer = chunks.find((chunk) => chunk.choices.length > 0)!
      expect(usageChunk.choices).toEqual([])
      expect(usageChunk.id).not.toBe('')
      expect(usageChunk).toMatchObject({
        id: answer.id,
        object: 'chat.completion.chunk',
        created: answer.created,
        model: answer.model,
      })
      const final = await openai.chat.completions.stream(params).finalChatCompletion()
      expect((final.usage as unknown as { cost: number }).cost).toBeGreaterThan(0)
    })

  describe('Chat Completions without stream_options.include_usage', () => {
    for (const model of ['openai/reports', 'anthropic/reports']) {
      test(`${model}: no usage chunk and no cost in the stream, the request still charged`, async () => {
        const told = await streams.chat(model, false)
        expect(told.costUsd).toBeUndefined()
        expect(told.headers.get('x-service-balance-usd')).not.toBeNull()
        expect(await chargedFor(told.requestId)).toBeGreaterThan(0)
      })
    }
  })

  test('a Responses stream the provider breaks says in response.failed what it is charged: the delivered part, nothing under 50 tokens', async () => {
    // The delivered words counted with the model's tokenizer: at least one token each.
    for (const [model, words, charged] of [
      ['openai/breaks-late', 60, true],
      ['openai/breaks-early', 5, false],
    ] as const) {
      const { data, response } = await openai.responses
        .create({ model, input: 'hello', stream: true })
        .withResponse()
      let failed: OpenAI.Responses.Response | undefined
      const error = await (async () => {
        try {
          for await (const event of data)
            if (event.type === 'response.failed') failed = event.response
        } catch (caught) {
          return caught
        }
      })()
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect(failed!.status).toBe('failed')
      const usage = failed!.usage as unknown as { output_tokens: number; cost: number }
      expect(usage.output_tokens).toBeGreaterThanOrEqual(words)
      expect(usage.output_tokens >= 50).toBe(charged)
      const requestId = response.headers.get('x-request-id')!
      // Written off: no charge row, and the log says 0.
      const chargedNano = charged ? await chargedFor(requestId) : await loggedCharge(requestId)
      expect(usdToNano(String(usage.cost))).toBe(chargedNano)
      expect(chargedNano > 0).toBe(charged)
    }
  })
})
