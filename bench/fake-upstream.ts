/**
 * The benchmark's provider: an OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 that answers as
 * fast as it can. The model name chooses an artificial delay before the answer starts, written like a
 * query string: "echo" answers at once, "echo?delay=50" after 50 ms. Non-streaming requests get a small
 * chat.completion with usage; streaming ones a role chunk, five content chunks, a finish chunk, a usage
 * chunk (when `stream_options.include_usage` is true) and `data: [DONE]`, in one write. A slow provider
 * is "echo?interval=500&events=40": that many content chunks, each its own write, `interval` ms apart.
 * GET /health answers 200.
 *
 * Run as a process: `bun bench/fake-upstream.ts <port>`.
 */

const WORDS = ['Hello', ' from', ' the', ' bench', ' upstream.']
const PROMPT_TOKENS = 12

type ChatBody = { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } }

/** A number a model name asks for ("echo?delay=50": delay 50), or 0. */
export function optionOf(model: string, name: 'delay' | 'interval' | 'events'): number {
  const query = model.split('?')[1]
  return query ? Number(new URLSearchParams(query).get(name) ?? 0) || 0 : 0
}

const usage = {
  prompt_tokens: PROMPT_TOKENS,
  completion_tokens: WORDS.length,
  total_tokens: PROMPT_TOKENS + WORDS.length,
}
const encoder = new TextEncoder()
let sequence = 0

function completion(model: string): Response {
  return Response.json({
    id: `chatcmpl-bench-${++sequence}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: WORDS.join(''), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage,
  })
}

function completionStream(model: string, includeUsage: boolean): Response {
  const base = {
    id: `chatcmpl-bench-${++sequence}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
  }
  const event = (choices: unknown[], extra: object = {}) =>
    encoder.encode(
      `data: ${JSON.stringify({ ...base, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`,
    )
  const interval = optionOf(model, 'interval')
  const words =
    interval > 0
      ? Array.from(
          { length: optionOf(model, 'events') || WORDS.length },
          (_, index) => WORDS[index % WORDS.length]!,
        )
      : WORDS
  const events = [
    event([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
    ]),
    ...words.map((word) =>
      event([{ index: 0, delta: { content: word }, logprobs: null, finish_reason: null }]),
    ),
    event([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
    ...(includeUsage
      ? [
          event([], {
            usage: {
              ...usage,
              completion_tokens: words.length,
              total_tokens: PROMPT_TOKENS + words.length,
            },
          }),
        ]
      : []),
    encoder.encode('data: [DONE]\n\n'),
  ]
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const [index, bytes] of events.entries()) {
        if (cancelled) return
        // A slow provider: the role chunk at once, then each event after the interval, on its own.
        if (interval > 0 && index > 0) await Bun.sleep(interval)
        controller.enqueue(bytes)
      }
      controller.close()
    },
    cancel() {
      cancelled = true
    },
  })
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
  })
}

/** Starts the fake provider on `port` (0: any free port). */
export function startFakeUpstream(port: number): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (request.method === 'GET' && path === '/health') return new Response('ok')
      if (request.method !== 'POST' || path !== '/v1/chat/completions')
        return Response.json({ error: { message: 'not found' } }, { status: 404 })
      const body = (await request.json()) as ChatBody
      const model = typeof body.model === 'string' ? body.model : 'echo'
      const delay = optionOf(model, 'delay')
      if (delay > 0) await Bun.sleep(delay)
      if (body.stream !== true) return completion(model)
      return completionStream(model, body.stream_options?.include_usage === true)
    },
  })
}

if (import.meta.main) {
  const server = startFakeUpstream(Number(Bun.argv[2] ?? 0))
  console.log(`fake upstream listening on ${server.url}`)
}
