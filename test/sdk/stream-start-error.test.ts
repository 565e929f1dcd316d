// A provider that answers 200 and then sends an error as its stream's first event has started nothing:
// the fallback answers, and with none left the client gets the failure as an HTTP error its SDK can
// retry, never a stream that began and broke. Read with the official SDKs.
import Anthropic from '@anthropic-ai/sdk'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'
import { rejection } from '../helpers/settle.ts'

const models = [
  testModel('openai/plain', 'fake?tokens=6'),
  anthropicTestModel('anthropic/plain', 'fake?tokens=6'),
  // Each event its own write, a ping or keep-alive before the error.
  anthropicTestModel(
    'anthropic/overloaded-first',
    'fake?replay=anthropic/error-first&writes=bytes',
  ),
  testModel('openai/limited-first', 'fake?replay=openai/error-first&writes=event'),
  // Keep-alives, then the connection closes: nothing started.
  testModel('openai/silent', 'fake?replay=broken/keepalive-only&writes=event'),
  // A JSON answer under the stream's content type.
  testModel('openai/json-body', 'fake?replay=broken/json-body&writes=event'),
  // A start that shows the client nothing, then the error, each event its own write.
  anthropicTestModel(
    'anthropic/start-then-overloaded',
    'fake?replay=anthropic/start-then-overloaded&writes=event&gap=20',
  ),
  testModel('openai/role-then-error', 'fake?replay=openai/role-then-error&writes=event&gap=20'),
  // A start, then nothing for longer than the gateway waits after a start: the stream is handed over
  // with the read still waiting, and nothing of it is lost.
  anthropicTestModel(
    'anthropic/slow-after-start',
    'fake?replay=anthropic/text&writes=event&gap=280',
  ),
  testModel('openai/slow-after-role', 'fake?replay=openai/text&writes=event&gap=280'),
]

describeWith('postgres', 'a stream whose first event is an error', () => {
  let gw: TestGateway
  let accountId: string
  let claude: Anthropic
  let openai: OpenAI
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const apiUrl = gw.app.listen().apiUrl
    accountId = await gw.account('10')
    const { key } = await gw.key(accountId)
    claude = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
    openai = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  const balanceNano = async () => (await gw.app.gateway.store.snapshot(accountId)).balanceNano
  const settled = async () => {
    await Bun.sleep(20)
    expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
      heldNano: 0,
      inFlight: 0,
    })
  }

  test('Messages client: the fallback answers the stream, charged at its own usage only', async () => {
    const before = await balanceNano()
    const stream = claude.messages.stream({
      model: 'anthropic/overloaded-first',
      fallbacks: ['openai/plain'],
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello' }],
    } as Anthropic.MessageStreamParams)
    const message = await stream.finalMessage()
    const { response } = await stream.withResponse()
    expect(response.headers.get('x-service-model')).toBe('openai/plain')
    expect(message.content.map((block) => (block.type === 'text' ? block.text : ''))).toEqual([
      'w0 w1 w2 w3 w4 w5 ',
    ])
    await settled()
    expect(await balanceNano()).toBeLessThan(before)
  })

  for (const [what, model, fallback] of [
    ['a rate-limit event', 'openai/limited-first', 'anthropic/plain'],
    ['keep-alives only and the end of the stream', 'openai/silent', 'openai/plain'],
    ['a body that is not an event stream', 'openai/json-body', 'anthropic/plain'],
  ] as const) {
    test(`Chat Completions client: the fallback answers after ${what}`, async () => {
      const stream = await openai.chat.completions
        .create({
          model,
          models: [fallback],
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
        } as OpenAI.ChatCompletionCreateParamsStreaming)
        .withResponse()
      expect(stream.response.headers.get('x-service-model')).toBe(fallback)
      let text = ''
      for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? ''
      expect(text).toBe('w0 w1 w2 w3 w4 w5 ')
      await settled()
    })
  }

  test('an error right after a start that showed nothing yet: the fallback answers, in each style', async () => {
    const stream = claude.messages.stream({
      model: 'anthropic/start-then-overloaded',
      fallbacks: ['anthropic/plain'],
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello' }],
    } as Anthropic.MessageStreamParams)
    const message = await stream.finalMessage()
    expect((await stream.withResponse()).response.headers.get('x-service-model')).toBe(
      'anthropic/plain',
    )
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'w0 w1 w2 w3 w4 w5 ' }),
    ])

    const chat = await openai.chat.completions
      .create({
        model: 'openai/role-then-error',
        models: ['openai/plain'],
        messages: [{ role: 'user', content: 'Hello' }],
        stream: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming)
      .withResponse()
    expect(chat.response.headers.get('x-service-model')).toBe('openai/plain')
    let text = ''
    for await (const chunk of chat.data) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ')
    await settled()
  })

  test('a start followed by a long silence: the stream goes on from where the wait stopped, whole', async () => {
    const message = await claude.messages
      .stream({
        model: 'anthropic/slow-after-start',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hello' }],
      })
      .finalMessage()
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'text', text: expect.stringMatching(/\S/) }),
    ])
    expect(message.stop_reason).toBe('end_turn')

    const chat = await openai.chat.completions.create({
      model: 'openai/slow-after-role',
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
    })
    let text = ''
    let finish: string | null | undefined
    for await (const chunk of chat) {
      text += chunk.choices[0]?.delta.content ?? ''
      finish ??= chunk.choices[0]?.finish_reason
    }
    expect(text).toBe(expectedText('openai/text'))
    expect(finish).toBe('stop')
    await settled()
  })

  describe('with no fallback left: an HTTP error before any stream, nothing charged', () => {
    test('overloaded right after a start: 503 model_unavailable, not a stream that broke', async () => {
      const error = await rejection(
        claude.messages
          .stream({
            model: 'anthropic/start-then-overloaded',
            max_tokens: 100,
            messages: [{ role: 'user', content: 'Hello' }],
          })
          .finalMessage(),
      )
      expect(error).toBeInstanceOf(Anthropic.InternalServerError)
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(503)
      await settled()
    })

    test('overloaded: 503 model_unavailable, which the SDK counts as retryable', async () => {
      const before = await balanceNano()
      const error = await rejection(
        claude.messages
          .stream({
            model: 'anthropic/overloaded-first',
            max_tokens: 100,
            messages: [{ role: 'user', content: 'Hello' }],
          })
          .finalMessage(),
      )
      expect(error).toBeInstanceOf(Anthropic.InternalServerError)
      const apiError = error as InstanceType<typeof Anthropic.APIError>
      expect(apiError.status).toBe(503)
      expect(apiError.headers?.get('x-service-error-code')).toBe('model_unavailable')
      expect(apiError.message).toContain('Overloaded')
      await settled()
      expect(await balanceNano()).toBe(before)
    })

    test('a body that is not an event stream: 503 upstream_response_invalid naming the check', async () => {
      const before = await balanceNano()
      const error = await rejection(
        openai.chat.completions.create({
          model: 'openai/json-body',
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
        }),
      )
      expect(error).toBeInstanceOf(OpenAI.InternalServerError)
      const apiError = error as InstanceType<typeof OpenAI.APIError>
      expect(apiError.status).toBe(503)
      expect(apiError.code).toBe('upstream_response_invalid')
      expect(apiError.message).toContain('not an event stream')
      await settled()
      expect(await balanceNano()).toBe(before)
    })

    test('rate limited: 503 upstream_rate_limited', async () => {
      const error = await rejection(
        openai.chat.completions.create({
          model: 'openai/limited-first',
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
        }),
      )
      expect(error).toBeInstanceOf(OpenAI.InternalServerError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503)
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_rate_limited')
      await settled()
    })
  })
})

/** The text of a Chat Completions fixture's content deltas. */
function expectedText(fixture: string): string {
  const file = readFileSync(join(import.meta.dir, '../fixtures/upstream', `${fixture}.sse`), 'utf8')
  return file
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('')
}
