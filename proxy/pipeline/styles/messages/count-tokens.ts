/**
 * `POST /v1/messages/count_tokens` (the SDKs' `messages.countTokens`): the input tokens of a Messages
 * request, free and never charged. Its stages, in order:
 *
 * 1. ceiling and key, as every key endpoint (503 `overloaded`; 401 / 403)
 * 2. body: 32 MB, JSON, depth; the Messages envelope without a required `max_tokens` (400 naming the field)
 * 3. model: preset, alias, `service/auto` and access, as a model request resolves them (404, 403, 503);
 *    the first candidate is counted
 * 4. guardrails: a block refuses (403 `guardrail_blocked`), redaction rewrites what is counted or sent
 * 5. count: a route to a Messages-style provider is asked for its own count (with the client's
 *    `anthropic-beta`); a request the provider refuses is refused; otherwise, or when the provider
 *    cannot answer, the gateway counts with the model's tokenizer (o200k_base when the catalog names none)
 *
 * Nothing is held or charged, and it counts toward no rate limit.
 */
import {
  MessagesCountTokensRequest,
  messagesRequestFields,
  type MessagesRequest,
} from '../../../../shared/schemas/messages.ts'
import type { Model } from '../../../core/catalog/catalog-types.ts'
import { loadTokenizer } from '../../../core/catalog/tokenizers.ts'
import type { Call, Candidate } from '../../../core/call.ts'
import type { KeyRecord } from '../../../core/key-record.ts'
import { log } from '../../../core/log.ts'
import { countTokensUpstreamRequest } from '../../../providers/anthropic/messages-request.ts'
import { dispatch } from '../../../providers/dispatch.ts'
import { keyEndpoint, type JsonAnswer } from '../../endpoint.ts'
import { promptOverhead } from '../../estimate.ts'
import type { Gateway } from '../../gateway.ts'
import { envelope } from '../../validate.ts'
import { countBody, countedCandidate, guardCount } from '../../counts.ts'
import { messagesPassthroughBody } from './passthrough-body.ts'
import { measureMessagesPrompt } from './prompt.ts'
import { messagesErrorBody } from './render-error.ts'
import { messagesStyle } from './style.ts'
import { providerBetas } from './thread-field.ts'
import { messagesContentTexts, messagesTexts, messagesUsesTools } from './texts.ts'

/**
 * A Messages request as counted. It may lack `max_tokens`, which none of the style's readers used here
 * (the envelope's rules, texts, prompt size, the body passed on) looks at.
 */
type CountBody = MessagesRequest

/** A count is of one request: a thread (kept conversation) is not the endpoint's. */
const countEnvelope = envelope<CountBody>(
  MessagesCountTokensRequest,
  new Set([...messagesRequestFields].filter((field) => field !== 'thread')),
  messagesStyle.envelope.rules,
  messagesStyle.envelope.unknownField,
)

/** Codes a provider gives a request it will not take as it is: the client's to fix, not ours to hide. */
const refusedByProvider = new Set([
  'invalid_request',
  'provider_policy_rejected',
  'payload_too_large',
])

export function countMessagesTokens(
  gw: Gateway,
  request: Request,
  address: () => string,
): Promise<Response> {
  return keyEndpoint(
    gw,
    request,
    {
      style: 'messages',
      render: (requestId) => (error) => messagesErrorBody(error, requestId),
      address,
      allowXApiKey: true,
      headers: messagesStyle.headers,
    },
    (key, call) => count(gw, request, key, call),
  )
}

async function count(
  gw: Gateway,
  request: Request,
  key: KeyRecord,
  call: Call,
): Promise<JsonAnswer> {
  const { body, bytes } = await countBody(request, countEnvelope)
  const prompt = measureMessagesPrompt(body, bytes)
  const candidate = countedCandidate(gw, key, call, body.model, {
    fallbacksField: 'fallbacks',
    tools: messagesUsesTools(body),
    images: prompt.images > 0,
  })
  await guardCount(key, call, (visit) => messagesTexts(body, visit))

  const counted = await providerCount(gw, request, call, candidate, body)
  if (counted) return { body: counted }
  return { body: { input_tokens: await gatewayCount(candidate.model, body, bytes) } }
}

/** The provider's own count, through the candidate's Messages-style routes; undefined when none answered. */
async function providerCount(
  gw: Gateway,
  request: Request,
  call: Call,
  candidate: Candidate,
  body: CountBody,
): Promise<Record<string, unknown> | undefined> {
  const routes = candidate.routes.filter((route) => route.provider.style === 'anthropic')
  if (routes.length === 0) return undefined
  const sentBeta = request.headers.get('anthropic-beta')
  const beta = sentBeta === null ? undefined : providerBetas(sentBeta)
  const sent = messagesPassthroughBody(body)
  const result = await dispatch([{ model: candidate.model, routes }], {
    requestId: call.requestId,
    stream: false,
    build: (route) =>
      countTokensUpstreamRequest(
        route,
        sent,
        beta === undefined ? undefined : { 'anthropic-beta': beta },
      ),
    clientSignal: request.signal,
    deadlineMs: Date.now() + gw.limits.upstreamTimeoutMs,
    timeoutSeconds: Math.round(gw.limits.upstreamTimeoutMs / 1000),
  })
  if (!result.ok) {
    if (refusedByProvider.has(result.error.code)) throw result.error
    log.info('provider token count failed; counted by the gateway', {
      requestId: call.requestId,
      code: result.error.code,
    })
    return undefined
  }
  try {
    const answer = JSON.parse(result.served.body ?? '') as Record<string, unknown>
    const tokens = answer.input_tokens
    if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0) {
      call.served = { model: candidate.model, route: result.served.route }
      return answer
    }
  } catch {}
  log.info('provider token count unreadable; counted by the gateway', {
    requestId: call.requestId,
  })
  return undefined
}

/**
 * The gateway's count: the model's tokenizer over the system prompt and messages, the tool definitions as
 * JSON, and the framing per message and allowance per image that holds use.
 */
async function gatewayCount(model: Model, body: CountBody, bytes: number): Promise<number> {
  const countText = await loadTokenizer(model.tokenizer ?? 'o200k_base')
  let tokens = promptOverhead(measureMessagesPrompt(body, bytes))
  messagesContentTexts(body, (text) => {
    tokens += countText(text)
    return undefined
  })
  if (body.tools !== undefined) tokens += countText(JSON.stringify(body.tools))
  return tokens
}
