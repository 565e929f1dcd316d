/**
 * The hot path of a Chat Completions request: one straight line of stages, each a plain function that
 * returns a decision; a refusal becomes the error response right here.
 *
 *  1. ceiling     in-process counter → 503 `overloaded`, Retry-After 5, before any hold
 *  2. body        32 MB, JSON, depth; compiled TypeBox envelope → 413 / 400 naming the field
 *  3. auth        key → sha256 → in-process cache (miss: one Postgres read) → 401 / 403 `account_suspended`
 *  4. resolve     model + fallbacks → candidates, within the key's allowed models (memory only)
 *  5. guardrails  (none yet: they arrive with the routing and policy work)
 *  6. estimate    worst case over candidates: input bound × input price + output limit × output price
 *  7. admit       ONE atomic admission-store call: rates, concurrency, spend caps, balance; places the hold
 *  8. dispatch    provider adapter; fall back to the next candidate only before the first byte
 *  9. respond     non-streaming: cost added to the body; streaming: relayed as it arrives
 * 10. settle      ONE atomic call: the hold ends, the delivered cost is charged (after the response)
 * 11. records     ledger and request-log rows to Postgres in batches, idempotent by request ID
 *
 * A warm request costs 0 Postgres round trips, 2 admission-store round trips and 1 upstream request.
 */
import { ServiceError } from '../../shared/errors.ts'
import { ChatRequest, chatRequestFields } from '../../shared/schemas/chat.ts'
import { costNano, type TokenUsage } from '../catalog/pricing.ts'
import { log } from '../log/log.ts'
import { buildChatUpstreamRequest } from '../providers/openai/chat-request.ts'
import { dispatch } from '../providers/dispatch.ts'
import { chatAnswerBody, readChatAnswer } from '../styles/chat/chat-answer.ts'
import { relayChatStream, type StreamOutcome } from '../styles/chat/chat-stream.ts'
import { measureChatPrompt, requestedChatOutput } from '../styles/chat/prompt.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'
import { admitRequest } from './admit.ts'
import { authenticate, presentedKey } from './authenticate.ts'
import { newCall, type Call } from './call.ts'
import { estimate, inputBound, type Estimate } from './estimate.ts'
import type { Gateway } from './gateway.ts'
import { readJsonBody } from './read-body.ts'
import { resolveModels } from './resolve-model.ts'
import { errorResponse, serviceHeaders } from './respond.ts'
import { finishCall } from './settle.ts'
import { envelope, validate } from './validate.ts'

const chatEnvelope = envelope<ChatRequest>(ChatRequest, chatRequestFields, (body) => {
  if (body.stream_options && body.stream !== true) {
    return new ServiceError('invalid_request', 'stream_options: only allowed when stream is true', { param: 'stream_options' })
  }
  if (body.provider !== undefined) {
    return new ServiceError('invalid_request', 'provider: provider preferences are not supported yet; remove the field', { param: 'provider' })
  }
  const index = body.messages.findIndex((message) => message.content === undefined && !('tool_calls' in message) && !('function_call' in message))
  if (index >= 0) return new ServiceError('invalid_request', `messages[${index}].content: is required`, { param: `messages[${index}].content` })
  return undefined
})

/** Output under this many tokens when a stream breaks: the whole charge is written off (spec). */
const WRITE_OFF_BELOW_TOKENS = 50

export async function handleChat(gw: Gateway, request: Request): Promise<Response> {
  const call = newCall('chat')
  if (!gw.ceiling.enter()) {
    return errorResponse(call, new ServiceError('overloaded', 'The gateway is at its concurrent-request limit. Retry after 5 seconds.'), chatErrorBody)
  }
  let released = false
  call.releaseSlot = () => {
    if (released) return
    released = true
    gw.ceiling.leave()
  }
  try {
    return await runChat(gw, call, request)
  } catch (error) {
    log.error('request failed unexpectedly', { requestId: call.requestId, error })
    void finishCall(gw, call, { kind: 'release' })
    return errorResponse(call, new ServiceError('internal_error', 'The gateway failed unexpectedly; nothing was charged. Retry.'), chatErrorBody)
  } finally {
    if (!call.streamOwnsSlot) call.releaseSlot()
  }
}

async function runChat(gw: Gateway, call: Call, request: Request): Promise<Response> {
  const refuse = (error: ServiceError) => {
    const response = errorResponse(call, error, chatErrorBody)
    void finishCall(gw, call, { kind: 'release' })
    return response
  }

  const body = await readJsonBody(request)
  if (!body.ok) return refuse(body.error)
  const valid = validate(body.value, chatEnvelope)
  if (!valid.ok) return refuse(valid.error)
  const chat = valid.value
  call.stream = chat.stream === true
  call.requestedModel = chat.model

  const auth = await authenticate(presentedKey(request.headers, false), gw.keys, call.startedAtMs)
  if (!auth.ok) return refuse(auth.error)
  const key = (call.key = auth.key)

  const resolved = resolveModels(gw.catalog, key, chat.model, chat.models)
  if (!resolved.ok) return refuse(resolved.error)
  call.candidates = resolved.candidates

  const cost = estimate(call.candidates, measureChatPrompt(chat, body.bytes), requestedChatOutput(chat))
  call.holdNano = cost.holdNano
  call.tokenEstimate = cost.tokens

  const admitted = await admitRequest(gw.store, gw.sql, {
    requestId: call.requestId,
    accountId: key.accountId,
    keyId: key.id,
    holdNano: cost.holdNano,
    tokens: cost.tokens,
    keyLimits: key.limits,
    accountLimits: key.accountLimits,
  })
  call.availableNano = admitted.availableNano
  if (!admitted.ok) return refuse(admitted.error)
  call.admitted = true
  gw.inflight.add(call.requestId, key.accountId)

  const limits = gw.limits
  const result = await dispatch(call.candidates, {
    requestId: call.requestId,
    stream: call.stream,
    build: (route) => buildChatUpstreamRequest(route, body.value, call.stream),
    clientSignal: request.signal,
    deadlineMs: call.startedAtMs + (call.stream ? limits.streamFirstByteTimeoutMs : limits.upstreamTimeoutMs),
    timeoutSeconds: Math.round((call.stream ? limits.streamFirstByteTimeoutMs : limits.upstreamTimeoutMs) / 1000),
  })
  if (!result.ok) {
    if (result.clientGone) call.status = 499
    return refuse(result.error)
  }
  const served = result.served
  call.served = { model: served.candidate.model, route: served.route }
  const price = (usage: TokenUsage) => costNano(served.candidate.model.pricing, usage)

  if (served.reader && served.first) return streamResponse(gw, call, chat, cost, served.reader, served.first, served.controller, price)

  const answer = readChatAnswer(served.body!)
  if (!answer.ok) {
    // Only the provider's own usage is charged for an answer that failed validation.
    const response = errorResponse(call, answer.error, chatErrorBody)
    void finishCall(gw, call, answer.usage ? { kind: 'charge', usage: answer.usage, costNano: price(answer.usage), forgive: false } : { kind: 'release' })
    return response
  }
  const usage = answer.usage ?? countedUsage(cost, call, answerOutputTokens(answer.json))
  const costOfAnswer = price(usage)
  const chargedNano = Math.min(costOfAnswer, call.holdNano)
  // The settle goes out before the response; its answer is not awaited. The balance header is the one
  // admission reported, with this request's hold replaced by its charge.
  call.availableNano = admitted.availableNano + call.holdNano - chargedNano
  call.status = 200
  void finishCall(gw, call, { kind: 'charge', usage, costNano: costOfAnswer, forgive: false })
  const headers = serviceHeaders(call, chargedNano)
  headers['content-type'] = 'application/json'
  return new Response(chatAnswerBody(answer.json, usage, chargedNano), { status: 200, headers })
}

function streamResponse(
  gw: Gateway,
  call: Call,
  chat: ChatRequest,
  cost: Estimate,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array,
  upstream: AbortController,
  price: (usage: TokenUsage) => number,
): Response {
  const model = call.served!.model
  call.status = 200
  call.firstByteMs = Math.round(performance.now() - call.startedAt)
  call.streamOwnsSlot = true
  const onEnd = (outcome: StreamOutcome) => {
    call.releaseSlot()
    if (outcome.failure) {
      call.status = outcome.failure.status
      call.errorCode = outcome.failure.code
    } else if (outcome.end === 'client_closed') {
      call.status = 499
    }
    const usage = outcome.usage ?? countedUsage(cost, call, outcome.deliveredOutputTokens)
    // A stream the provider broke is charged for what was delivered, and under 50 output tokens not at
    // all; a client that went away pays for what it was sent.
    const forgive = outcome.end === 'upstream_failed' && usage.outputTokens < WRITE_OFF_BELOW_TOKENS
    void finishCall(gw, call, { kind: 'charge', usage, costNano: price(usage), forgive, reason: forgive ? 'stream_broken_early' : undefined })
  }
  const body = relayChatStream({
    first,
    reader,
    upstream,
    includeUsage: chat.stream_options?.include_usage === true,
    idleTimeoutMs: gw.limits.streamIdleTimeoutMs,
    holdNano: call.holdNano,
    inputBoundTokens: inputBound(cost, model),
    price,
    onEnd,
  })
  const headers = serviceHeaders(call)
  headers['content-type'] = 'text/event-stream; charset=utf-8'
  headers['cache-control'] = 'no-cache'
  headers['x-accel-buffering'] = 'no'
  return new Response(body, { status: 200, headers })
}

/** The gateway's own count when the provider reported no usage: the usual-size input estimate and the output seen. */
function countedUsage(cost: Estimate, call: Call, outputTokens: number): TokenUsage {
  return { inputTokens: Math.min(cost.inputTokens, call.served!.model.contextLength), cachedInputTokens: 0, outputTokens }
}

function answerOutputTokens(json: Record<string, unknown>): number {
  let chars = 0
  for (const choice of (json.choices as { message?: { content?: unknown } }[]) ?? []) {
    if (typeof choice.message?.content === 'string') chars += choice.message.content.length
  }
  return Math.ceil(chars / 4)
}
