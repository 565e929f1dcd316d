// The relay on its own, fed recorded provider streams cut at every byte position: whatever the cut, the
// client receives exactly what one whole write gives, and nothing stalls (a read that completes no event,
// or only a keep-alive, is followed by the next read).
import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ProviderStyle } from '../../../../proxy/core/catalog/catalog-types.ts'
import { costNano, type TokenUsage } from '../../../../proxy/core/catalog/pricing.ts'
import type { TokenizerName } from '../../../../proxy/core/catalog/tokenizers.ts'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { adapters } from '../../../../proxy/providers/adapters.ts'
import { SseSplitter } from '../../../../proxy/providers/sse.ts'
import { relayStream, type StreamOutcome } from '../../../../proxy/pipeline/streams/relay.ts'
import type { StreamOutput } from '../../../../proxy/pipeline/streams/stream-output.ts'
import {
  chatPassthroughStream,
  chatStreamOutput,
} from '../../../../proxy/pipeline/styles/chat/stream.ts'
import {
  messagesPassthroughStream,
  messagesStreamOutput,
} from '../../../../proxy/pipeline/styles/messages/stream.ts'
import { responsesStreamOutput } from '../../../../proxy/pipeline/styles/responses/stream.ts'
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'

const fixtures = join(import.meta.dir, '..', '..', '..', 'fixtures', 'upstream')
const pricing = {
  inputNanoPerMTok: 1_000_000,
  outputNanoPerMTok: 2_000_000,
  cachedInputNanoPerMTok: 1_000_000,
  cacheWriteNanoPerMTok: 1_000_000,
}
const context = <Body>(body: Body) => ({
  requestId: 'req_relaytest',
  accountId: 'acct_test',
  body,
  modelId: 'test/model',
  created: 1_700_000_000,
})

/** The client style outputs a provider style's stream can be written to (translated, or passed through). */
const outputs: Record<ProviderStyle, Record<string, () => StreamOutput>> = {
  openai: {
    'chat (passed through)': () =>
      chatPassthroughStream(context({ stream_options: { include_usage: true } } as ChatRequest)),
    messages: () => messagesStreamOutput(context({} as MessagesRequest)),
    responses: () => responsesStreamOutput(context({} as ResponsesRequest), () => {}),
  },
  anthropic: {
    chat: () =>
      chatStreamOutput(context({ stream_options: { include_usage: true } } as ChatRequest)),
    'messages (passed through)': () => messagesPassthroughStream(),
    responses: () => responsesStreamOutput(context({} as ResponsesRequest), () => {}),
  },
}

type Relayed = { text: string; outcome: StreamOutcome }

type RelayTestOptions = {
  holdNano?: number
  usageLimitTokens?: number
  idleTimeoutMs?: number
  /** The provider's stream after the first chunk (default: the rest of `chunks`, then its close). */
  after?: ReadableStream<Uint8Array>
  upstream?: AbortController
  /** The model family's tokenizer, when the catalog names one (the stop at the hold then counts). */
  tokenizer?: TokenizerName
}

/** Relays `chunks` (the provider's reads, in order) and returns what the client read and how it ended. */
export async function relayChunks(
  chunks: Uint8Array[],
  provider: ProviderStyle,
  output: StreamOutput,
  options: RelayTestOptions = {},
): Promise<Relayed> {
  const [first, ...rest] = chunks
  const after =
    options.after ??
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = rest.shift()
        if (next) controller.enqueue(next)
        else controller.close()
      },
    })
  let outcome: StreamOutcome | undefined
  const splitter = new SseSplitter()
  const stream = relayStream({
    head: { events: splitter.push(first!), splitter },
    reader: after.getReader(),
    upstream: options.upstream ?? new AbortController(),
    decoder: adapters[provider].streamDecoder(),
    output,
    idleTimeoutMs: options.idleTimeoutMs ?? 1_000,
    holdNano: options.holdNano ?? 1_000_000_000,
    inputBoundTokens: 1_000,
    usageLimitTokens: options.usageLimitTokens ?? 1_000_000,
    countInput: async () => 250,
    pricing,
    tokenizer: options.tokenizer,
    price: (usage: TokenUsage) => costNano(pricing, usage),
    onEnd: (ended) => {
      outcome = ended
      return Math.min(costNano(pricing, ended.usage), options.holdNano ?? 1_000_000_000)
    },
  })
  const text = await new Response(stream).text()
  return { text, outcome: outcome! }
}

const encoder = new TextEncoder()
const recordings = (provider: ProviderStyle) =>
  readdirSync(join(fixtures, provider))
    .filter((name) => name.endsWith('.sse'))
    .map((name) => ({
      name: name.replace(/\.sse$/, ''),
      text: Bun.file(join(fixtures, provider, name)).text(),
    }))

/** Cuts bytes into two reads at `at`. */
const cutAt = (bytes: Uint8Array, at: number) =>
  [bytes.slice(0, at), bytes.slice(at)].filter((part) => part.length > 0)

describe('relay: any cut of the provider bytes gives the client the same stream', () => {
  for (const provider of ['openai', 'anthropic'] as const) {
    for (const recording of recordings(provider)) {
      for (const [styleName, output] of Object.entries(outputs[provider])) {
        for (const lineEnd of ['LF', 'CRLF'] as const) {
          test(`${provider} ${recording.name} → ${styleName}, ${lineEnd}, cut at every byte`, async () => {
            const text = await recording.text
            const bytes = encoder.encode(lineEnd === 'CRLF' ? text.replaceAll('\n', '\r\n') : text)
            const whole = await relayChunks([bytes], provider, output())
            expect(whole.text.length).toBeGreaterThan(0)
            for (let at = 1; at < bytes.length; at++) {
              const cut = await relayChunks(cutAt(bytes, at), provider, output())
              if (cut.text !== whole.text)
                expect({ at, text: cut.text }).toEqual({ at, text: whole.text })
              expect(cut.outcome).toEqual(whole.outcome)
            }
          })
        }
      }
    }
  }

  test('single-byte reads, with keep-alive comments and blank lines between events', async () => {
    const text = (await Bun.file(join(fixtures, 'anthropic', 'tool-single.sse')).text()).replaceAll(
      '\n\nevent:',
      '\n\n: keep-alive\n\n\n\nevent:',
    )
    const bytes = encoder.encode(text)
    const whole = await relayChunks([bytes], 'anthropic', outputs.anthropic.chat!())
    const single = await relayChunks(
      Array.from(bytes, (byte) => Uint8Array.of(byte)),
      'anthropic',
      outputs.anthropic.chat!(),
    )
    expect(single.text).toBe(whole.text)
    expect(single.outcome.end).toBe('complete')
    expect(whole.text).toContain('data: [DONE]')
  })

  test('a provider that sends only keep-alives for a while, then the answer, is relayed to the end', async () => {
    const text = await Bun.file(join(fixtures, 'openai', 'text.sse')).text()
    const chunks = [': keep-alive\n\n', ': keep-alive\n\n', ': keep-alive\n\n', text].map((part) =>
      encoder.encode(part),
    )
    const relayed = await relayChunks(chunks, 'openai', outputs.openai.messages!())
    expect(relayed.outcome.end).toBe('complete')
    expect(relayed.text).toContain('event: message_stop')
  })

  test('a usage report of more tokens than the model can take is not charged: the delivered output is', async () => {
    const text = (await Bun.file(join(fixtures, 'openai', 'text.sse')).text()).replace(
      '"completion_tokens":3,',
      '"completion_tokens":1e15,',
    )
    const relayed = await relayChunks(
      [encoder.encode(text)],
      'openai',
      outputs.openai.messages!(),
      {
        usageLimitTokens: 10_000,
      },
    )
    expect(relayed.outcome.end).toBe('complete')
    expect(relayed.outcome.usage).toMatchObject({ inputTokens: 250, outputTokens: 3 })
    const sane = await relayChunks(
      [encoder.encode(text.replace('1e15', '3'))],
      'openai',
      outputs.openai.messages!(),
      {
        usageLimitTokens: 10_000,
      },
    )
    expect(sane.outcome.usage).toMatchObject({
      inputTokens: 40,
      cachedInputTokens: 16,
      outputTokens: 3,
    })
  })

  test("the provider's end marker completes the client's stream, though the provider keeps its connection open", async () => {
    for (const provider of ['openai', 'anthropic'] as const) {
      const text = await Bun.file(join(fixtures, provider, 'text.sse')).text()
      const upstream = new AbortController()
      let reads = 0
      // After the answer the provider sends a keep-alive, then nothing: its stream stays open until cut.
      const silent = new ReadableStream<Uint8Array>({
        pull(controller) {
          reads += 1
          if (reads === 1) controller.enqueue(encoder.encode(': keep-alive\n\n'))
          else
            return new Promise<void>((_, reject) =>
              upstream.signal.addEventListener('abort', () => reject(new Error('aborted'))),
            )
        },
      })
      const startedAt = performance.now()
      const relayed = await relayChunks(
        [encoder.encode(text)],
        provider,
        provider === 'openai' ? outputs.openai.messages!() : outputs.anthropic.chat!(),
        { after: silent, upstream, idleTimeoutMs: 60_000 },
      )
      // Well before the idle timeout (60 s), which is what ended it before.
      expect(performance.now() - startedAt).toBeLessThan(10_000)
      expect(relayed.outcome.end).toBe('complete')
      expect(relayed.text).toContain(provider === 'openai' ? 'event: message_stop' : 'data: [DONE]')
      // What follows the end marker is read and dropped; a connection held open past the grace is cut.
      expect(upstream.signal.aborted).toBe(false)
      const cut = await Promise.race([
        new Promise<boolean>((resolve) =>
          upstream.signal.addEventListener('abort', () => resolve(true)),
        ),
        Bun.sleep(5_000).then(() => false),
      ])
      expect(cut).toBe(true)
      expect(reads).toBe(2)
    }
  })

  test('an answer of exactly the output the hold covers, in deltas that cut words, is not stopped at the hold', async () => {
    const answer = `word${' word'.repeat(19)}`
    expect(countTokens(answer)).toBe(20)
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    let sse = chunk({ role: 'assistant', content: '' }, null)
    for (let at = 0; at < answer.length; at += 7)
      sse += chunk({ content: answer.slice(at, at + 7) }, null)
    sse += `${chunk({}, 'length')}data: [DONE]\n\n`
    // The hold covers the input bound (1,000 tokens) and 20 output tokens, no more.
    const holdNano = costNano(pricing, {
      inputTokens: 1_000,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 20,
    })
    const relayed = await relayChunks(
      sse.split(/(?<=\n\n)/).map((event) => encoder.encode(event)),
      'openai',
      outputs.openai['chat (passed through)']!(),
      { holdNano, tokenizer: 'o200k_base' },
    )
    expect(relayed.outcome.end).toBe('complete')
    expect(relayed.text).toContain('"finish_reason":"length"')
    expect(relayed.outcome.usage.outputTokens).toBe(20)
  })

  test('a UTF-8 character cut in two arrives whole', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Grüße 👋' } }] })}\n\ndata: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`
    const bytes = encoder.encode(event)
    const at = bytes.indexOf(0xf0) + 2
    const relayed = await relayChunks(cutAt(bytes, at), 'openai', outputs.openai.messages!())
    expect(relayed.text).toContain('"text":"Grüße 👋"')
  })
})
