/**
 * A fake OpenAI-compatible provider on 127.0.0.1, the only stand-in the tests use. Its behaviour is
 * chosen by the upstream model name the gateway sends, written like a query string:
 *   "fake"                          a normal answer of 5 tokens
 *   "fake?tokens=20"                answer of 20 output tokens (one word each)
 *   "fake?prompt=100&cached=40"     usage reports these input and cached tokens
 *   "fake?status=500"               fail with this status (429, 500, 401, 400…)
 *   "fake?delay=50"                 wait before answering (ms)
 *   "fake?chunkDelay=20"            wait between stream chunks (ms)
 *   "fake?break=3"                  stream: drop the connection after 3 content chunks
 *   "fake?errorAfter=3"             stream: send an error event after 3 content chunks
 *   "fake?nousage=1"                report no usage
 *   "fake?garbage=1"                answer with a body that is not JSON
 *   "fake?stall=1"                  stream: send the first chunk, then nothing
 *   "fake?dropFirst=1"              stream: drop the connection before sending anything
 * Every request is recorded (headers and body) for assertions.
 */

export type RecordedRequest = { path: string; headers: Record<string, string>; body: Record<string, unknown> }

export type FakeUpstream = {
  url: string
  requests: RecordedRequest[]
  /** Streams currently open, and streams whose client went away. */
  openStreams: number
  abortedStreams: number
  stop(): Promise<void>
}

export function startFakeUpstream(): FakeUpstream {
  const state: FakeUpstream = { url: '', requests: [], openStreams: 0, abortedStreams: 0, stop: async () => {} }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const body = (await request.json()) as Record<string, unknown>
      state.requests.push({ path: new URL(request.url).pathname, headers: Object.fromEntries(request.headers), body })
      const [name, query = ''] = String(body.model).split('?')
      const options = new URLSearchParams(query)
      const number = (key: string, fallback: number) => Number(options.get(key) ?? fallback)
      if (options.has('delay')) await Bun.sleep(number('delay', 0))
      const status = number('status', 200)
      if (status !== 200) {
        return Response.json({ error: { message: `fake failure ${status}`, type: 'server_error', code: options.get('code') } }, { status })
      }
      if (options.has('garbage')) return new Response('<html>not json</html>', { headers: { 'content-type': 'text/html' } })
      const tokens = number('tokens', 5)
      const words = Array.from({ length: tokens }, (_, i) => `w${i} `)
      const promptTokens = number('prompt', Math.ceil(JSON.stringify(body.messages).length / 4))
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: tokens,
        total_tokens: promptTokens + tokens,
        prompt_tokens_details: { cached_tokens: number('cached', 0) },
      }
      const id = `chatcmpl-${crypto.randomUUID()}`
      const base = { id, created: Math.floor(Date.now() / 1000), model: `${name}-2026` }
      if (body.stream !== true) {
        return Response.json({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: words.join(''), refusal: null }, logprobs: null, finish_reason: 'stop' }],
          ...(options.has('nousage') ? {} : { usage }),
        })
      }
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
      const chunk = (choices: unknown[], extra: object = {}) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`
      const encoder = new TextEncoder()
      const chunkDelay = number('chunkDelay', 0)
      let cancelled = false
      state.openStreams += 1
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          const send = (text: string) => controller.enqueue(encoder.encode(text))
          try {
            if (options.has('dropFirst')) {
              controller.error(new Error('fake connection drop'))
              return
            }
            send(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]))
            if (options.has('stall')) {
              while (!cancelled) await Bun.sleep(20)
              return
            }
            for (const [i, word] of words.entries()) {
              if (cancelled) return
              if (options.has('break') && i === number('break', 0)) {
                // Let what was sent leave first: erroring a stream discards chunks not yet read.
                await Bun.sleep(30)
                controller.error(new Error('fake connection drop'))
                return
              }
              if (options.has('errorAfter') && i === number('errorAfter', 0)) {
                send(`data: ${JSON.stringify({ error: { message: 'fake overload', type: 'server_error' } })}\n\n`)
                controller.close()
                return
              }
              if (chunkDelay) await Bun.sleep(chunkDelay)
              send(chunk([{ index: 0, delta: { content: word }, logprobs: null, finish_reason: null }]))
            }
            send(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]))
            if (includeUsage && !options.has('nousage')) send(chunk([], { usage }))
            send('data: [DONE]\n\n')
            controller.close()
          } finally {
            state.openStreams -= 1
          }
        },
        cancel() {
          cancelled = true
          state.abortedStreams += 1
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  state.url = `http://127.0.0.1:${server.port}`
  state.stop = async () => {
    await server.stop(true)
  }
  return state
}
