/**
 * The requests of the model-based money test, in the three client styles: the body and headers the
 * gateway gets, and the part the money model reads (`Ask`: bytes, messages, output limit, models).
 */
import type { Prng } from '../prng.ts'
import type { Ask, Style } from './charges.ts'

export type ApiRequest = {
  ask: Ask
  path: string
  body: string
  headers: Record<string, string>
  secret: string | undefined
  /** Chat streams: the client asked for the usage chunk (and its cost). */
  includeUsage: boolean
  describe: string
}

export type RequestChoice = {
  style: Style
  stream: boolean
  /** The model named, then its fallbacks. */
  models: string[]
  secret: string | undefined
  outputLimit: number | undefined
  /** A body the gateway refuses before reading the key. */
  invalid?: boolean
  leaveAfter?: number
}

const WORDS = [
  'money',
  'hold',
  'ledger',
  'stream',
  'nano',
  'charge',
  'key',
  'limit',
  'spend',
  'cap',
]

export const paths: Record<Style, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
}

function text(rng: Prng): string {
  return Array.from({ length: rng.int(1, 30) }, () => rng.pick(WORDS)).join(' ')
}

/** 1 or 3 turns, alternating, the last the user's. */
function turns(rng: Prng): { role: string; content: string }[] {
  const count = rng.pick([1, 1, 3])
  return Array.from({ length: count }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: text(rng),
  }))
}

/** The same request with another output limit (the body's bytes change with it). */
export function withOutputLimit(request: ApiRequest, limit: number): ApiRequest {
  const body = JSON.parse(request.body) as Record<string, unknown>
  body[request.ask.style === 'responses' ? 'max_output_tokens' : 'max_tokens'] = limit
  const json = JSON.stringify(body)
  const bytes = Buffer.byteLength(json)
  return {
    ...request,
    body: json,
    ask: { ...request.ask, bytes, outputLimit: limit },
    describe: `${request.describe.replace(/ max \d+| \d+ B$/g, '')} max ${limit} ${bytes} B`,
  }
}

export function buildRequest(rng: Prng, choice: RequestChoice): ApiRequest {
  const { style, stream, models, secret, outputLimit, invalid } = choice
  const includeUsage = style === 'chat' && stream && rng.chance(0.7)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  let body: Record<string, unknown>
  let messages: number
  if (style === 'chat') {
    const sent = invalid ? [] : turns(rng)
    messages = sent.length
    body = {
      model: models[0],
      messages: sent,
      ...(outputLimit !== undefined ? { max_tokens: outputLimit } : {}),
      ...(stream ? { stream: true } : {}),
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      ...(models.length > 1 ? { models: models.slice(1) } : {}),
    }
  } else if (style === 'messages') {
    const sent = turns(rng)
    messages = sent.length
    body = {
      model: models[0],
      // max_tokens is required in this style: leaving it out is the invalid body.
      ...(invalid ? {} : { max_tokens: outputLimit ?? 1_000 }),
      messages: sent,
      ...(stream ? { stream: true } : {}),
      ...(models.length > 1 ? { fallbacks: models.slice(1) } : {}),
    }
    headers['anthropic-version'] = '2023-06-01'
  } else {
    const items = rng.chance(0.3) ? text(rng) : turns(rng)
    // The estimate counts the input items and the instructions turn.
    messages = (Array.isArray(items) ? items.length : 0) + 1
    body = {
      model: models[0],
      input: items,
      // Below the style's minimum of 16: the invalid body.
      ...(invalid ? { max_output_tokens: 3 } : {}),
      ...(!invalid && outputLimit !== undefined ? { max_output_tokens: outputLimit } : {}),
      ...(stream ? { stream: true } : {}),
      store: false,
      ...(models.length > 1 ? { models: models.slice(1) } : {}),
    }
  }
  if (secret !== undefined) {
    if (style === 'messages' && rng.chance(0.5)) headers['x-api-key'] = secret
    else headers.authorization = `Bearer ${secret}`
  }
  const json = JSON.stringify(body)
  const ask: Ask = {
    style,
    stream,
    models,
    bytes: Buffer.byteLength(json),
    messages,
    texts: promptTexts(body),
    outputLimit: style === 'messages' ? (outputLimit ?? 1_000) : invalid ? undefined : outputLimit,
    valid: !invalid,
    leaveAfter: choice.leaveAfter,
  }
  const describe =
    `${style}${stream ? ' stream' : ''} ${models.join('>')}` +
    `${ask.outputLimit !== undefined ? ` max ${ask.outputLimit}` : ''}` +
    `${invalid ? ' (invalid body)' : ''}${choice.leaveAfter !== undefined ? ` leave after ${choice.leaveAfter}` : ''}` +
    ` ${ask.bytes} B`
  return { ask, path: paths[style], body: json, headers, secret, includeUsage, describe }
}

/** The texts a request's prompt holds: its input text, or each message's. */
function promptTexts(body: Record<string, unknown>): string[] {
  const turns = body.messages ?? body.input
  if (typeof turns === 'string') return [turns]
  return Array.isArray(turns) ? (turns as { content: string }[]).map((turn) => turn.content) : []
}
