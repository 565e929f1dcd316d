/**
 * How the model-based money test talks to the gateway: the API server's model endpoints and key
 * rotation, the operator API's account view and changes, and client streams read whole or left after a
 * number of content deltas.
 */
import { readChatStream, readMessagesStream, readResponsesStream } from '../client-streams.ts'
import type { TestGateway } from '../gateway.ts'
import type { Style } from './charges.ts'

/** The operator token startTestGateway configures. */
const OPERATOR_TOKEN = 'test-operator-token'

export type Answer<T> = { status: number; body: T }

export async function operator<T = Record<string, unknown>>(
  gw: TestGateway,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await gw.app.site.handle(
    new Request(`http://site.test/operator/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  return { status: response.status, body: (await response.json()) as T }
}

export function callApi(
  gw: TestGateway,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<Response> {
  return gw.app.api.handle(
    new Request(`http://gateway.test${path}`, { method: 'POST', headers, body }),
  )
}

/** The operator API's view of an account, as far as money goes. */
export type AccountView = {
  balanceNano: number
  heldNano: number
  availableNano: number
  inFlight: number
  ledgerBalanceNano: number
  keys: {
    id: string
    heldNano: number
    inFlight: number
    daily: { spentNano: number }
    monthly: { spentNano: number }
  }[]
}

/** A decimal USD string as nano-USD, without binary floating point. */
export function usdTextToNano(text: string): number {
  const match = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text)
  if (!match) throw new Error(`not a USD amount: ${text}`)
  return Number(match[1]) * 1_000_000_000 + Number((match[2] ?? '').padEnd(9, '0'))
}

/** A USD number from a JSON body (`usage.cost`), as nano-USD. */
export const usdNumberToNano = (usd: number) => Math.round(usd * 1e9)

export type StreamRead = {
  /** Content deltas the client received. */
  deltas: number
  /** The stream ended with a complete answer (its end marker). */
  complete: boolean
  /** The error code of an error event. */
  error: string | null
  /** The cost the stream reported, in USD. */
  cost: number | null
}

/** Reads a whole stream and what it adds up to. */
export async function readWhole(style: Style, response: Response): Promise<StreamRead> {
  return summarize(style, await response.text())
}

/** What a stream's text adds up to. */
export function summarize(style: Style, text: string): StreamRead {
  if (style === 'chat') {
    const summary = readChatStream(text)
    return {
      deltas: summary.kinds.filter((kind) => kind === 'text').length,
      complete: summary.kinds.includes('[DONE]'),
      error: summary.error,
      cost: summary.cost,
    }
  }
  if (style === 'messages') {
    const summary = readMessagesStream(text)
    return {
      deltas: summary.kinds.filter((kind) => kind === 'text_delta').length,
      complete: summary.kinds.includes('message_stop'),
      error: summary.error,
      cost: summary.cost,
    }
  }
  const summary = readResponsesStream(text)
  return {
    deltas: summary.kinds.filter((kind) => kind === 'output_text.delta').length,
    complete: summary.finish === 'completed',
    error: summary.error,
    cost: summary.cost,
  }
}

/** Content deltas among the complete events of a stream's text so far. */
function deltasIn(style: Style, text: string): { deltas: number; error: boolean } {
  let deltas = 0
  let error = false
  for (const block of text.split('\n\n').slice(0, -1)) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('\n')
    if (!data || data === '[DONE]') continue
    const event = JSON.parse(data)
    if (event.error || event.type === 'error') error = true
    if (style === 'chat' && event.choices?.[0]?.delta?.content) deltas += 1
    if (style === 'messages' && event.type === 'content_block_delta') deltas += 1
    if (style === 'responses' && event.type === 'response.output_text.delta') deltas += 1
  }
  return { deltas, error }
}

/**
 * Reads until `count` content deltas arrived, then leaves (cancels the body) at once; returns what was
 * read. A stream that ends first (an error, the hold) is read to its end.
 */
export async function readThenLeave(
  style: Style,
  response: Response,
  count: number,
): Promise<{ deltas: number; left: boolean; text: string }> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const seen = deltasIn(style, text)
    if (seen.deltas >= count) {
      await reader.cancel()
      return { deltas: seen.deltas, left: true, text }
    }
    const { done, value } = await reader.read()
    if (done) return { deltas: seen.deltas, left: false, text }
    text += decoder.decode(value, { stream: true })
  }
}

/** A stream the test keeps open and reads as it comes, as a waiting client does, to leave later. */
export type OpenStream = { reader: ReadableStreamDefaultReader<Uint8Array>; reading: Promise<void> }

/** The first event of an answer in each style. */
const started: Record<Style, string> = {
  chat: '"choices"',
  messages: 'message_start',
  responses: 'response.created',
}

/** Reads until the answer started, then goes on reading in the background until the stream is left. */
export async function keepOpen(style: Style, response: Response): Promise<OpenStream> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes(started[style])) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  const reading = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // Left: the read ends with the cancel.
    }
  })()
  return { reader, reading }
}

export async function leave(stream: OpenStream): Promise<void> {
  await stream.reader.cancel()
  await stream.reading
}
