/**
 * What the fake provider answers, decided from the upstream model name, written like a query string
 * ("fake?tokens=20&tools=2"), and from the request (tools offered, last turn a tool result or not).
 *
 *   tokens=N       answer of N output tokens (one word each)           (default 5)
 *   vocab=long     words that are long single tokens (" responsibilities"…, one o200k token each)
 *   honour=1       stop at the request's output limit (finish length), as real providers do
 *   prompt=N       usage reports N input tokens                          (default: from the request size)
 *   cached=N       …of which N read from the prompt cache
 *   cacheWrite=N   …and N written to it (Messages style only); cacheWriteHour=N of those kept an hour
 *   reasoning=N    …of the output, N spent reasoning (OpenAI style only)
 *   refusal=1      the words are a refusal: `refusal` instead of `content` (OpenAI style only)
 *   tools=N        when tools are offered and the last turn is not a tool result: N tool calls
 *   argsChunks=K   stream tool arguments in K fragments                  (default 3)
 *   ids=functions  tool-call IDs such as `functions.get_weather:0` (as some OpenAI-compatible hosts make)
 *   interleave=1   stream: all tool calls start, then their fragments take turns (OpenAI style only);
 *                  interleave=2: each call starts with its first fragment, then the fragments take turns
 *   wholeCalls=1   stream: all tool calls whole in one delta, without `index` (OpenAI style only)
 *   noargs=1       tool calls without arguments: `{}` in a whole answer; a stream sends none (OpenAI
 *                  style) or one empty `partial_json` (Anthropic style), as the providers do
 *   finish=F       stop | length | stop_sequence | content_filter        (default stop, or tool_calls)
 *   status=S       fail with HTTP status S (429, 500, 529, 400…); code=C adds an error code/type;
 *                  retryAfter=S a `retry-after` header of S (seconds or a date)
 *   statuses=S1,S2…  the nth request to this model name fails with Sn (200: answers), later ones answer
 *   delay=MS       wait before answering; chunkDelay=MS between stream events
 *   break=K        stream: drop the connection after K content events
 *   errorAfter=K   stream: send an error event after K content events
 *   nousage=1      report no usage;  garbage=1  answer with a body that is not JSON
 *   stall=1        stream: send the first event, then nothing;  dropFirst=1  drop before anything
 *   replay=NAME    stream: replay test/fixtures/upstream/NAME.sse as it is
 *   keepalive=0    stream: no keep-alive comments (default: one first, then one every eight events)
 *   writes=…, gap=MS, crlf=1, seed=N   how the stream's bytes are cut into writes (wire.ts)
 */

export type PlannedCall = { id: string; name: string; arguments: string }

export type Plan = {
  options: URLSearchParams
  name: string
  words: string[]
  toolCalls: PlannedCall[]
  finish: 'stop' | 'length' | 'stop_sequence' | 'content_filter' | 'tool_calls'
  usage: {
    prompt: number
    completion: number
    cached: number
    cacheWrite: number
    cacheWriteHour: number
    reasoning: number
  }
  report: boolean
}

export function plan(
  model: string,
  body: Record<string, unknown>,
  lastTurnIsToolResult: boolean,
): Plan {
  const [name = '', query = ''] = model.split('?')
  const options = new URLSearchParams(query)
  const number = (key: string, fallback: number) => Number(options.get(key) ?? fallback)
  const offered = Array.isArray(body.tools)
    ? (body.tools as { name?: string; function?: { name?: string } }[])
    : []
  const toolNames = offered.map((tool) => tool.name ?? tool.function?.name ?? 'tool')
  const callTools = options.has('tools') && toolNames.length > 0 && !lastTurnIsToolResult
  const toolCalls = callTools
    ? Array.from({ length: number('tools', 1) }, (_, index) => ({
        id:
          options.get('ids') === 'functions'
            ? `functions.${toolNames[index % toolNames.length]}:${index}`
            : `call_fake${index}x${Math.random().toString(36).slice(2, 8)}`,
        name: toolNames[index % toolNames.length]!,
        arguments: options.has('noargs')
          ? ''
          : JSON.stringify({ location: ['Paris', 'Tokyo', 'Lima'][index % 3], unit: 'c' }),
      }))
    : []
  const limit = outputLimit(body)
  const honoured = options.has('honour') && limit !== undefined && limit < number('tokens', 5)
  const count = honoured ? limit : number('tokens', 5)
  const word =
    options.get('vocab') === 'long'
      ? (index: number) => LONG_WORDS[index % LONG_WORDS.length]!
      : (index: number) => `w${index} `
  const words = toolCalls.length > 0 ? [] : Array.from({ length: count }, (_, index) => word(index))
  const completion = toolCalls.length > 0 ? toolCalls.length * 12 : words.length
  const finish =
    (options.get('finish') as Plan['finish'] | null) ??
    (toolCalls.length > 0 ? 'tool_calls' : honoured ? 'length' : 'stop')
  return {
    options,
    name,
    words,
    toolCalls,
    finish,
    usage: {
      prompt: number(
        'prompt',
        Math.ceil(JSON.stringify(body.messages ?? body.input ?? '').length / 4),
      ),
      completion,
      cached: number('cached', 0),
      cacheWrite: number('cacheWrite', 0),
      cacheWriteHour: number('cacheWriteHour', 0),
      reasoning: number('reasoning', 0),
    },
    report: !options.has('nousage'),
  }
}

/** Single tokens of o200k_base, 12 to 16 characters long. */
export const LONG_WORDS = [
  ' responsibilities',
  ' characteristics',
  ' international',
  ' understanding',
  ' communication',
  ' environmental',
  ' representatives',
  ' infrastructure',
  ' administration',
  ' implementation',
  ' organizations',
  ' opportunities',
]

/** The output limit the request sets, in either provider style. */
function outputLimit(body: Record<string, unknown>): number | undefined {
  const limit = body.max_completion_tokens ?? body.max_tokens
  return typeof limit === 'number' ? limit : undefined
}

/** Splits text into `count` fragments of near-equal length. */
export function fragments(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count))
  const parts: string[] = []
  for (let at = 0; at < text.length; at += size) parts.push(text.slice(at, at + size))
  return parts
}
