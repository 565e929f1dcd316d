/**
 * The demo model's provider, built into the gateway: an OpenAI-compatible Chat Completions endpoint
 * answered in the process, so `demo/echo` answers right after `bun run start`, with no provider key and
 * no network. Its answer says it is a demo and repeats the last user message, word by word when
 * streamed, with usage; it honours the output limit. It stands behind the same adapter, relay and
 * accounting as any provider, so a first request shows the gateway as it is.
 */

/** Pause between streamed words, so a stream is seen to stream. */
const WORD_PAUSE_MS = 15
/** How much of the user's message is repeated. */
const ECHOED_CHARS = 500

type ChatBody = {
  model?: string
  messages?: { role?: string; content?: unknown }[]
  stream?: boolean
  stream_options?: { include_usage?: boolean }
  max_completion_tokens?: number
  max_tokens?: number
}

/** Answers a Chat Completions request as `fetch` would answer one sent to a provider. */
export async function echoFetch(
  _url: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  const body = JSON.parse(String(init.body ?? '{}')) as ChatBody
  const limit = body.max_completion_tokens ?? body.max_tokens ?? Infinity
  const all = answerWords(lastUserText(body))
  const words = all.slice(0, Math.max(1, limit))
  const finish = words.length < all.length ? 'length' : 'stop'
  const usage = {
    prompt_tokens: promptTokens(body),
    completion_tokens: words.length,
    total_tokens: promptTokens(body) + words.length,
  }
  const base = {
    id: `chatcmpl-echo-${crypto.randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'echo',
  }
  if (body.stream !== true) {
    const message = { role: 'assistant', content: words.join(''), refusal: null }
    return Response.json({
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage,
    })
  }
  return new Response(
    echoStream(
      base,
      words,
      finish,
      body.stream_options?.include_usage === true ? usage : undefined,
      init.signal ?? undefined,
    ),
    {
      headers: { 'content-type': 'text/event-stream' },
    },
  )
}

function echoStream(
  base: Record<string, unknown>,
  words: string[],
  finish: string,
  usage: object | undefined,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const chunk = (choices: unknown[], extra: object = {}) =>
    encoder.encode(
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...(usage ? { usage: null } : {}), ...extra })}\n\n`,
    )
  const delta = (value: object, finishReason: string | null = null) =>
    chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finishReason }])
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(delta({ role: 'assistant', content: '' }))
      for (const word of words) {
        await Bun.sleep(WORD_PAUSE_MS)
        if (signal?.aborted) return
        controller.enqueue(delta({ content: word }))
      }
      controller.enqueue(delta({}, finish))
      if (usage) controller.enqueue(chunk([], { usage }))
      controller.enqueue(encoder.encode('data: [DONE]\n\n'))
      controller.close()
    },
  })
}

function lastUserText(body: ChatBody): string {
  const last = [...(body.messages ?? [])].reverse().find((message) => message.role === 'user')
  const content = last?.content
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content
      .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
      .join(' ')
  return ''
}

/** The answer in words, each with the space before it, as a provider's tokens come. */
function answerWords(said: string): string[] {
  const quoted = said.trim().replace(/\s+/g, ' ').slice(0, ECHOED_CHARS)
  const text = `This is demo/echo, a demo model built into the gateway: no model ran and nothing was charged. You said: “${quoted}”`
  return text.split(/(?= )/)
}

/** About four characters a token, as providers count prose. */
function promptTokens(body: ChatBody): number {
  return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4))
}
