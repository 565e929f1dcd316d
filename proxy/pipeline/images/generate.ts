/**
 * `POST /v1/images/generations`: one image request, in the same straight line as a model request.
 *
 *  1. ceiling     in-process counter → 503 `overloaded`, before any hold
 *  2. body        32 MB, JSON, depth; the Images API envelope → 413 / 400 naming the field (401 first
 *                 when the key is not valid)
 *  3. auth        key → 401 / 403 `account_suspended`
 *  4. resolve     catalog image model → 404 `unknown_model`, 400 for a chat model; access → 403 `model_not_allowed`
 *  5. guardrail   on the prompt: block → 403 `guardrail_blocked`; redact rewrites it
 *  6. price       catalog price of size/quality × n → 400 naming an unpriced field
 *  7. routes      providers with a key (and allowed for the account) → 503 `images_unavailable`, nothing held
 *  8. admit       hold = the price, open until the cost deadline → 429 / 403 / 402 / 502
 *  9. record      image_requests row, pending (the status endpoint can answer from here on)
 * 10. send        the next route only after a refused connection; never a second generation
 * 11. outcome     (answered once the row is updated, so the status endpoint agrees with the answer)
 *                 images: charge what was returned (≤ hold), row charged, the provider's JSON + usage.cost
 *                 error status: release, row failed, 502 `image_request_failed` (400 for the client's fault)
 *                 unknown (timeout, lost connection): the hold stays until the cost deadline, row pending, 502
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import type { Route } from '../../core/catalog/catalog-types.ts'
import type { ImageModel } from '../../core/catalog/catalog-types.ts'
import { admitRequest, keyAdmission } from '../admit.ts'
import { authenticateRequest, bodyRefusal } from '../authenticate.ts'
import { bodyBeforeCeiling, withinCeiling, type Frame } from '../endpoint.ts'
import { newCall, type Call } from '../../core/call.ts'
import type { Gateway } from '../gateway.ts'
import type { BodyResult } from '../read-body.ts'
import { errorResponse, serviceHeaders } from '../respond.ts'
import { finishCall } from '../settle.ts'
import { validate } from '../validate.ts'
import { guardText } from '../../policy/guardrails/guard.ts'
import { log } from '../../core/log.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'
import { imageEnvelope, priceImages, type ImagePrice } from './image-body.ts'
import { imageFailure, statusHint, unknownOutcome } from './image-errors.ts'
import { resolveImageModel, usableImageRoutes } from '../../policy/routing/resolve-image-model.ts'
import {
  insertImageRequest,
  markCharged,
  markFailed,
  markProvider,
} from '../../stores/image-requests.ts'
import { sendImageRequest, type ImageOutcome } from '../../providers/image-upstream.ts'

const NO_TOKENS = { inputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }

export async function generateImages(
  gw: Gateway,
  request: Request,
  address: () => string,
): Promise<Response> {
  const call = newCall('images')
  const raw = await bodyBeforeCeiling(request, call)
  if (raw instanceof Response) return raw
  const sent = { value: false }
  const frame: Frame = {
    render: chatErrorBody,
    failed: () => {
      call.status = 500
      // Once the provider may have generated images, the hold must wait for the cost deadline.
      if (sent.value) keepHoldOpen(gw, call)
      void finishCall(gw, call, { kind: 'release' })
      return new ServiceError(
        'internal_error',
        `The gateway failed unexpectedly. Check ${statusHint(call.requestId)}.`,
      )
    },
    countedByStages: true,
  }
  return withinCeiling(gw, call, request, frame, () => run(gw, call, request, raw, address, sent))
}

async function run(
  gw: Gateway,
  call: Call,
  request: Request,
  raw: BodyResult,
  address: () => string,
  sent: { value: boolean },
): Promise<Response> {
  const refuse = (error: ServiceError) => {
    const response = errorResponse(call, error, chatErrorBody)
    void finishCall(gw, call, { kind: 'release' })
    return response
  }

  const authenticate = () => authenticateRequest(gw, request, { allowXApiKey: false, address })
  // A body refused here is answered with the key's refusal when there is one (and counts as an
  // invalid-key attempt).
  const refuseBody = async (error: ServiceError) =>
    refuse(await bodyRefusal(call, authenticate(), error))

  if (!raw.ok) return refuseBody(raw.error)
  const valid = validate(raw.value, imageEnvelope)
  if (!valid.ok) return refuseBody(valid.error)
  const body = valid.value
  call.requestedModel = body.model

  const auth = await authenticate()
  if (!auth.ok) {
    call.key = auth.key
    return refuse(auth.error)
  }
  const key = (call.key = auth.key)

  const model = resolveImageModel(gw.catalog, key, body.model)
  if (model instanceof ServiceError) return refuse(model)
  const guarded = await guardText(key.guardrail, body.prompt)
  if (!guarded.ok) return refuse(guarded.error)
  call.redactions = guarded.redactions
  const price = priceImages(model, body)
  if (price instanceof ServiceError) return refuse(price)
  const routes = usableImageRoutes(model, key)
  if (routes instanceof ServiceError) return refuse(routes)

  const costDeadlineMs = gw.limits.imageCostDeadlineMs
  call.holdNano = price.holdNano
  const admitted = await admitRequest(
    gw.store,
    gw.sql,
    {
      ...keyAdmission(key),
      requestId: call.requestId,
      holdNano: price.holdNano,
      tokens: 0,
      holdDeadlineMs: costDeadlineMs,
    },
    'n, the size or the quality',
  )
  call.availableNano = admitted.availableNano
  if (!admitted.ok) return refuse(admitted.error)
  call.admitted = true
  gw.inflight.add(call.requestId, key.accountId)
  const costDeadline = new Date(Date.now() + costDeadlineMs)

  try {
    await insertImageRequest(gw.sql, {
      requestId: call.requestId,
      accountId: key.accountId,
      keyId: key.id,
      model: model.id,
      provider: routes[0]!.provider.id,
      images: price.images,
      variant: `${price.size}/${price.quality}`,
      holdNano: price.holdNano,
      costDeadline,
    })
  } catch (error) {
    log.error('image request not recorded; not sent', { requestId: call.requestId, error })
    return refuse(
      new ServiceError(
        'images_unavailable',
        'Image requests are unavailable right now; nothing was sent or charged. Retry shortly.',
      ),
    )
  }

  sent.value = true
  const upstreamBody = {
    ...body,
    prompt: guarded.text,
    n: price.images,
    size: price.size,
    quality: price.quality,
  }
  const outcome = await sendImageRequest(
    routes,
    upstreamBody,
    call.startedAtMs + gw.limits.upstreamTimeoutMs,
  )
  return respond(
    gw,
    call,
    { model, price, admittedAvailableNano: admitted.availableNano, costDeadline },
    outcome,
  )
}

type Admitted = {
  model: ImageModel
  price: ImagePrice
  admittedAvailableNano: number
  costDeadline: Date
}

/**
 * The answer, once the request's row says the same: the status endpoint, asked right after it (by this
 * process or another), reads the charge or the failure the client was just told about, not pending.
 * The row's update follows the store's settle or release, as before; a failed update is logged and the
 * answer goes out anyway (the row then ends at the sweep). A store that keeps failing (its settle retries
 * for minutes) holds the answer back at most `ROW_WAIT_MS`.
 */
async function respond(
  gw: Gateway,
  call: Call,
  admitted: Admitted,
  outcome: ImageOutcome,
): Promise<Response> {
  const { model, price, admittedAvailableNano } = admitted
  switch (outcome.kind) {
    case 'images': {
      const returned = Math.min(outcome.returned, price.images)
      const costNano = returned * price.unitNano
      call.availableNano = admittedAvailableNano + call.holdNano - costNano
      call.status = 200
      call.served = { model, route: outcome.route }
      const provider = outcome.route.provider.id
      const written = finishCall(gw, call, {
        kind: 'charge',
        usage: NO_TOKENS,
        costNano,
        forgive: false,
      })
        .then(() => {
          // A settle that found its hold expired charged nothing: the sweep releases the row instead.
          if (costNano > 0 && call.chargedNano === 0) return
          return markCharged(gw.sql, call.requestId, provider, returned, call.chargedNano)
        })
        .catch((error) =>
          log.error('image request status not updated', { requestId: call.requestId, error }),
        )
      const json = outcome.json
      // A provider that made more images than asked: the client gets those it asked, and pays, for.
      if (outcome.returned > returned) json.data = (json.data as unknown[]).slice(0, returned)
      // usage.cost only beside the provider's own usage: the SDK's type says usage has token counts.
      if (typeof json.usage === 'object' && json.usage !== null)
        json.usage = { ...json.usage, cost: Number(nanoToUsd(costNano)) }
      await atMost(written, ROW_WAIT_MS)
      return Response.json(json, { headers: headers(call, model, outcome.route, costNano) })
    }
    case 'refused':
    case 'unreachable': {
      const error = imageFailure(call.requestId, outcome)
      const provider = outcome.kind === 'refused' ? outcome.route.provider.id : null
      call.availableNano = admittedAvailableNano + call.holdNano
      // Made before the request's record is written: it sets the status and error code recorded.
      const response = errorResponse(call, error, chatErrorBody)
      const written = finishCall(gw, call, { kind: 'release' })
        .then(() => markFailed(gw.sql, call.requestId, provider, error.code))
        .catch((failure) =>
          log.error('image request status not updated', {
            requestId: call.requestId,
            error: failure,
          }),
        )
      await atMost(written, ROW_WAIT_MS)
      return withHeaders(
        response,
        call,
        model,
        outcome.kind === 'refused' ? outcome.route : undefined,
      )
    }
    case 'unknown': {
      // The provider took the request and may bill it: the record names it.
      call.served = { model, route: outcome.route }
      keepHoldOpen(gw, call)
      const response = errorResponse(
        call,
        unknownOutcome(call.requestId, outcome, call.holdNano, admitted.costDeadline),
        chatErrorBody,
      )
      void finishCall(gw, call, { kind: 'release' })
      const written = markProvider(gw.sql, call.requestId, outcome.route.provider.id).catch(
        (error) =>
          log.error('image request provider not recorded', { requestId: call.requestId, error }),
      )
      log.warn('image request outcome unknown; hold kept until the cost deadline', {
        requestId: call.requestId,
        provider: outcome.route.provider.id,
      })
      await atMost(written, ROW_WAIT_MS)
      return withHeaders(response, call, model, outcome.route)
    }
  }
}

/** How long an answer waits for its row's update (the settle's first retries included). */
const ROW_WAIT_MS = 2_000

/** Waits for `promise` (which never rejects), but not longer than `ms`. */
async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}

/**
 * The provider may have generated (and billed) the images: the hold is neither settled nor released.
 * It leaves the in-flight set, so it is not extended, and expires at the cost deadline.
 */
function keepHoldOpen(gw: Gateway, call: Call): void {
  call.admitted = false
  gw.inflight.delete(call.requestId)
}

/** The service headers, naming the image model and the provider it was sent to. */
function headers(
  call: Call,
  model: ImageModel,
  route: Route | undefined,
  costNano?: number,
): Record<string, string> {
  const values = serviceHeaders(call, costNano)
  values['x-service-model'] = model.id
  if (route) values['x-service-provider'] = route.provider.id
  return values
}

function withHeaders(
  response: Response,
  call: Call,
  model: ImageModel,
  route: Route | undefined,
): Response {
  for (const [name, value] of Object.entries(headers(call, model, route)))
    response.headers.set(name, value)
  return response
}
