/**
 * The hot path of a model request, in any client style: one straight line of stages, each a plain
 * function that returns a decision; a refusal becomes the error response right here, in the style's shape.
 *
 *  1. ceiling     in-process counter → 503 `overloaded`, Retry-After 5, before any hold; a request
 *                 takes its slot once its body has arrived (read first, so a slow client holds no slot)
 *  2. body        32 MB, JSON, depth; compiled TypeBox envelope of the style; tool and output schema
 *                 size and nesting → 413 / 400 naming the field
 *  3. auth        key → sha256 → in-process cache (miss: one Postgres read) → 401 / 403 `account_suspended`
 *                 (also when stage 2 refused the body: a request without a valid key is 401 first)
 *  4. resolve     model / `@preset/slug` / `service/auto[:variant]` / alias + fallbacks → up to 4
 *                 candidates with their usable routes, within the key's, guardrail's and account's
 *                 allowlists and the provider settings; paused providers and open breakers skipped (memory only)
 *  5. guardrails  block → 403 `guardrail_blocked` naming the detector; redact rewrites the texts (memory
 *                 only); both over the kept conversation a follow-up continues too
 *  6. estimate    candidates whose context cannot hold the prompt dropped (`context_too_long` when none
 *                 can; tokenized only past the byte bound); worst case over the rest: input bound × input
 *                 price + output limit × output price
 *  7. admit       ONE atomic admission decision: rates, concurrency, spend caps and the guardrail's
 *                 budget, the free allowance, balance; places the hold (with Redis, in memory inside
 *                 this process's lease when it has room, else one call)
 *  8. dispatch    provider adapter of each route (the client's body as is when the styles match, else
 *                 translated); fall back to the next route or candidate only before the first event
 *                 (a stream whose first event is an error has not started);
 *                 every outcome feeds the route's breaker
 *  9. respond     the answer in the client's style with its cost; a stream relayed as it arrives
 * 10. settle      ONE atomic decision: the hold ends, the delivered cost is charged (after the response;
 *                 inside a lease in memory, its charges sent to Redis with the lease's next round)
 * 11. records     ledger and request-log rows to Postgres in batches, idempotent by request ID
 *
 * A warm request costs 0 Postgres round trips, 2 admission-store round trips (0 inside a lease) and
 * 1 upstream request.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import type { UpstreamRequest } from '../providers/adapter.ts'
import { adapters } from '../providers/adapters.ts'
import { dispatch } from '../providers/dispatch.ts'
import type { ClientStyle } from './styles/client-style.ts'
import type { Conversation } from '../core/neutral/conversation.ts'
import { admitRequest, keyAdmission } from './admit.ts'
import { respondWithAnswer } from './answer.ts'
import { authenticateRequest, bodyRefusal, checkKey } from './authenticate.ts'
import type { KeyRecord } from '../core/key-record.ts'
import { newCall, type Call } from '../core/call.ts'
import { estimate } from './estimate.ts'
import type { Gateway } from './gateway.ts'
import type { BodyResult } from './read-body.ts'
import { fitContext } from '../policy/routing/context.ts'
import { guard } from '../policy/guardrails/guard.ts'
import { findPreset, isPresetId, presetRefusal } from '../policy/routing/presets.ts'
import { parseProviderPrefs, type ProviderPrefs } from '../policy/routing/provider-prefs.ts'
import { resolveRouting } from '../policy/routing/resolve.ts'
import { autoFailed } from '../policy/routing/refusals.ts'
import { promptOverhead, toolPromptTokens } from './estimate.ts'
import { checkSchemas } from './schema-limits.ts'
import { errorResponse } from './respond.ts'
import { bodyBeforeCeiling, withinCeiling, type Frame } from './endpoint.ts'
import { finishCall } from './settle.ts'
import { recordAdmission } from '../core/metrics.ts'
import { validate } from './validate.ts'
import { collectTexts } from '../core/texts.ts'

/**
 * `address`: the client's address, read only when a per-address limit needs it. `as`: a key an in-process
 * caller has already identified (the dashboard playground, acting for a signed-in account); stage 3 then
 * checks that record instead of reading a presented key. HTTP requests never reach here with one.
 */
export async function handle<Body>(
  gw: Gateway,
  style: ClientStyle<Body>,
  request: Request,
  address: () => string = () => 'unknown',
  as?: KeyRecord,
): Promise<Response> {
  const call = newCall(style.name)
  const raw = await bodyBeforeCeiling(request, call)
  if (raw instanceof Response) return raw
  const frame: Frame = {
    render: (error) => style.errorBody(error, call.requestId),
    headers: style.headers(call.requestId),
    failed: () => {
      call.status = 500
      void finishCall(gw, call, { kind: 'release' })
      return new ServiceError(
        'internal_error',
        'The gateway failed unexpectedly; nothing was charged. Retry.',
      )
    },
    countedByStages: true,
  }
  return withinCeiling(gw, call, request, frame, () =>
    run(gw, style, call, request, raw, address, as),
  )
}

async function run<Body>(
  gw: Gateway,
  style: ClientStyle<Body>,
  call: Call,
  request: Request,
  raw: BodyResult,
  address: () => string,
  as?: KeyRecord,
): Promise<Response> {
  const headers = style.headers(call.requestId)
  const refuse = (error: ServiceError) => {
    // A refusal after admission releases the hold: the balance it reports is the one it leaves.
    if (call.admitted && call.availableNano !== undefined) call.availableNano += call.holdNano
    const response = errorResponse(
      call,
      error,
      (failure) => style.errorBody(failure, call.requestId),
      headers,
    )
    void finishCall(gw, call, { kind: 'release' })
    return response
  }

  const authenticate = () =>
    as
      ? checkKey(as, gw.clock.now())
      : authenticateRequest(gw, request, { allowXApiKey: style.allowXApiKey, address })
  const refuseBody = async (error: ServiceError) =>
    refuse(await bodyRefusal(call, authenticate(), error))

  if (!raw.ok) return refuseBody(raw.error)
  const valid = validate(raw.value, style.envelope)
  if (!valid.ok) return refuseBody(valid.error)
  const body = valid.value
  const schemas = checkSchemas(body as Record<string, unknown>)
  if (schemas) return refuseBody(schemas)
  let requested = style.requested(body)
  call.stream = requested.stream
  call.requestedModel = requested.model

  const auth = await authenticate()
  if (!auth.ok) {
    call.key = auth.key
    return refuse(auth.error)
  }
  const key = (call.key = auth.key)
  const prepared = await style.prepare?.(body, key.accountId)
  if (prepared) return refuse(prepared)

  const presetId = isPresetId(requested.model) ? requested.model : undefined
  const ownFallbacks = requested.fallbacks.length > 0
  if (presetId) {
    const preset = findPreset(key, presetId, 'model')
    if (preset instanceof ServiceError) return refuse(preset)
    style.applyDefaults(body, preset.params)
    requested = {
      ...style.requested(body),
      model: preset.model,
      fallbacks: ownFallbacks ? requested.fallbacks : preset.fallbacks,
    }
  }
  let prefs: ProviderPrefs | undefined
  const prefsField = style.providerPrefs?.(body)
  if (prefsField) {
    const parsed = parseProviderPrefs(prefsField, gw.catalog.providers)
    if (parsed instanceof ServiceError) return refuse(parsed)
    prefs = parsed
  }
  const prompt = style.measure(body, raw.bytes)
  prompt.tools = style.usesTools(body)
  const routing = resolveRouting(gw.catalog, gw.health, key, {
    model: requested.model,
    fallbacks: requested.fallbacks,
    fallbacksField: style.fallbacksField,
    prefs,
    features: { tools: prompt.tools, images: prompt.images > 0 },
    nowMs: Date.now(),
  })
  if (!routing.ok)
    return refuse(
      presetId
        ? presetRefusal(routing.error, presetId, style.fallbacksField, ownFallbacks)
        : routing.error,
    )

  const guarded = await guard(
    key.guardrail,
    (visit) => style.texts(body, visit),
    style.keptTexts && ((visit) => style.keptTexts!(body, visit)),
  )
  if (!guarded.ok) return refuse(guarded.error)
  prompt.textBytes += Math.max(0, guarded.bytesAdded)
  if (guarded.redactions > 0)
    call.redactions = [...guarded.redactedBy]
      .map(([detector, count]) => `${detector}=${count}`)
      .join(', ')

  const overheadTokens = promptOverhead(prompt)
  const size = {
    boundTokens: prompt.textBytes + overheadTokens + toolPromptTokens(prompt),
    overheadTokens,
    toolPromptTokens: toolPromptTokens(prompt),
    texts: () => promptTexts(style, body),
  }
  const fit = await fitContext(routing.candidates, size)
  if (!fit.ok) return refuse(fit.error)
  call.candidates = fit.candidates
  const cost = estimate(call.candidates, prompt, requested.outputTokens)
  call.holdNano = cost.holdNano
  call.tokenEstimate = cost.tokens

  const admitted = await admitRequest(
    gw.store,
    gw.sql,
    {
      ...keyAdmission(key),
      requestId: call.requestId,
      holdNano: cost.holdNano,
      tokens: cost.tokens,
      freePerDay: routing.free ? gw.limits.freeRequestsPerDay : undefined,
    },
    style.outputLimitField,
  )
  call.availableNano = admitted.availableNano
  recordAdmission(admitted.ok ? 'admitted' : admitted.error.code)
  if (!admitted.ok) return refuse(admitted.error)
  call.admitted = true
  gw.inflight.add(call.requestId, key.accountId)

  const timeoutMs = call.stream ? gw.limits.streamFirstByteTimeoutMs : gw.limits.upstreamTimeoutMs
  const result = await dispatch(call.candidates, {
    requestId: call.requestId,
    stream: call.stream,
    build: upstreamRequests(style, body, call.stream, request.headers),
    clientSignal: request.signal,
    deadlineMs: call.startedAtMs + timeoutMs,
    timeoutSeconds: Math.round(timeoutMs / 1000),
    attemptFirstByteMs: gw.limits.attemptFirstByteMs,
    health: gw.health,
  })
  if (!result.ok) {
    if (result.clientGone) call.status = 499
    return refuse(
      routing.auto ? autoFailed(routing.auto, routing.free, result.error) : result.error,
    )
  }
  return respondWithAnswer(gw, style, call, {
    body,
    estimate: cost,
    prompt: size,
    served: result.served,
    admittedAvailableNano: admitted.availableNano,
    headers,
  })
}

/**
 * The request for each route: the client's body (and the style's headers, read once) when the route's
 * provider shares the client's style, else the translation (made once).
 */
function upstreamRequests<Body>(
  style: ClientStyle<Body>,
  body: Body,
  stream: boolean,
  clientHeaders: Headers,
): (route: Route) => UpstreamRequest | ServiceError {
  let conversation: Conversation | ServiceError | undefined
  let headers: Record<string, string> | undefined
  for (const name of style.passthrough?.headers ?? []) {
    const sent = clientHeaders.get(name)
    const rewrite = style.passthrough?.headerValue
    const value = sent === null ? undefined : rewrite ? rewrite(name, sent) : sent
    if (value !== undefined) (headers ??= {})[name] = value
  }
  return (route) => {
    const adapter = adapters[route.provider.style]
    if (style.passthrough?.provider === route.provider.style)
      return adapter.request(
        route,
        { kind: 'raw', body: style.passthrough.body(body), headers },
        stream,
      )
    conversation ??= style.conversation(body)
    if (conversation instanceof ServiceError) return conversation
    return adapter.request(route, { kind: 'conversation', conversation }, stream)
  }
}

/**
 * Everything the model reads as text, for counting tokens: the client's texts, tool definitions, and stored
 * turns. A tool definition is counted once, as its JSON (which holds its description and schema texts).
 */
function promptTexts<Body>(style: ClientStyle<Body>, body: Body): string[] {
  const raw = body as { tools?: unknown; functions?: unknown }
  const texts = collectTexts((visit) =>
    style.texts({ ...raw, tools: undefined, functions: undefined } as Body, visit),
  )
  if (raw.tools !== undefined) texts.push(JSON.stringify(raw.tools))
  if (raw.functions !== undefined) texts.push(JSON.stringify(raw.functions))
  style.keptTexts?.(body, (text) => {
    texts.push(text)
    return undefined
  })
  return texts
}
