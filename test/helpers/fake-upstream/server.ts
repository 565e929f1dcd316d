/**
 * A fake model provider on 127.0.0.1, the only stand-in the tests use. It speaks both provider styles:
 * OpenAI Chat Completions at `/v1/chat/completions` and Anthropic Messages at `/v1/messages` (its token
 * count at `/v1/messages/count_tokens`), and its behaviour is chosen by the upstream model name (see
 * plan.ts); the OpenAI Images API at `/v1/images/generations` is in images.ts. Every request is
 * recorded for assertions.
 */
import { join } from 'node:path'
import { imagesAnswer } from './images.ts'
import { anthropicAnswer, anthropicError, anthropicStream } from './anthropic.ts'
import { openaiAnswer, openaiError, openaiStream, type Step } from './openai.ts'
import { plan } from './plan.ts'
import { streamResponse } from './stream.ts'

export type RecordedRequest = {
  path: string
  headers: Record<string, string>
  body: Record<string, unknown>
}

export type FakeUpstream = {
  url: string
  requests: RecordedRequest[]
  /** Streams whose client (the gateway) went away before the end. */
  abortedStreams: number
  /** Streams being written right now. */
  openStreams: number
  stop(): Promise<void>
}

const fixtures = join(import.meta.dir, '..', '..', 'fixtures', 'upstream')

export function startFakeUpstream(): FakeUpstream {
  const state: FakeUpstream = {
    url: '',
    requests: [],
    abortedStreams: 0,
    openStreams: 0,
    stop: async () => {},
  }
  /** Requests so far per upstream model name, for `statuses`. */
  const served = new Map<string, number>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      const anthropic = path.endsWith('/messages')
      const body = (await request.json()) as Record<string, unknown>
      state.requests.push({ path, headers: Object.fromEntries(request.headers), body })
      if (path.endsWith('/images/generations')) return imagesAnswer(request, body)
      if (path.endsWith('/messages/count_tokens')) return countTokensAnswer(body)
      const answer = plan(String(body.model), body, lastTurnIsToolResult(body, anthropic))
      const { options } = answer
      if (options.has('delay')) await Bun.sleep(Number(options.get('delay')))
      // statuses=S1,S2,…: the model's nth request answers the nth status, every later one 200.
      const sequence = options.get('statuses')?.split(',')
      const nth = sequence ? (served.get(String(body.model)) ?? 0) : 0
      if (sequence) served.set(String(body.model), nth + 1)
      const status = Number(sequence ? (sequence[nth] ?? 200) : (options.get('status') ?? 200))
      if (status !== 200)
        return Response.json(
          anthropic
            ? anthropicError(status, options.get('code'))
            : openaiError(status, options.get('code')),
          {
            status,
            headers: options.has('retryAfter') ? { 'retry-after': options.get('retryAfter')! } : {},
          },
        )
      if (options.has('garbage'))
        return new Response('<html>not json</html>', { headers: { 'content-type': 'text/html' } })
      if (body.stream !== true)
        return Response.json(anthropic ? anthropicAnswer(answer) : openaiAnswer(answer))

      const replay = options.get('replay')
      const includeUsage =
        (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
      const steps: Step[] = replay
        ? (await Bun.file(join(fixtures, `${replay}.sse`)).text())
            .split(/(?<=\n\n)/)
            .map((text) => ({ text, content: true }))
        : anthropic
          ? anthropicStream(answer)
          : openaiStream(answer, includeUsage)
      return streamResponse(withKeepAlives(steps, options), options, anthropic, state)
    },
  })
  state.url = `http://127.0.0.1:${server.port}`
  state.stop = async () => {
    await server.stop(true)
  }
  return state
}

/** A Messages token count: the input the plan would report (`prompt=N`), or its `status=S` failure. */
function countTokensAnswer(body: Record<string, unknown>): Response {
  const answer = plan(String(body.model), body, false)
  const status = Number(answer.options.get('status') ?? 200)
  if (status !== 200)
    return Response.json(anthropicError(status, answer.options.get('code')), { status })
  return Response.json({ input_tokens: answer.usage.prompt })
}

/**
 * Keep-alive comments as providers and the proxies in front of them send them: one before the first
 * event, then one after every eighth (`keepalive=0`: none). A replayed recording keeps its own, unless
 * `keepalive=1` adds them.
 */
function withKeepAlives(steps: Step[], options: URLSearchParams): Step[] {
  const keepAlive = options.get('keepalive') ?? (options.has('replay') ? '0' : '1')
  if (keepAlive === '0') return steps
  const comment = { text: ': keep-alive\n\n', content: false }
  return [comment, ...steps.flatMap((step, index) => (index % 8 === 7 ? [step, comment] : [step]))]
}

function lastTurnIsToolResult(body: Record<string, unknown>, anthropic: boolean): boolean {
  const messages = Array.isArray(body.messages)
    ? (body.messages as { role?: string; content?: unknown }[])
    : []
  const last = messages.at(-1)
  if (!anthropic) return last?.role === 'tool'
  return (
    last?.role === 'user' &&
    Array.isArray(last.content) &&
    (last.content as { type?: string }[]).some((block) => block.type === 'tool_result')
  )
}
