/**
 * The frame of every API-server endpoint that takes a key. `withinCeiling`: the gateway's ceiling first
 * (503 `overloaded`, Retry-After 5, before anything is held; model requests and image generations read
 * their body before it, `bodyBeforeCeiling`), an unexpected failure answered as
 * 500 in the client's error shape (never a stack), and the ceiling slot given back when the answer is
 * done (a stream keeps it until its end). Model requests (pipeline.ts) and image generations run their
 * stages inside it. `keyEndpoint` adds the key (401 / 403 / the per-address invalid-key limit) and a JSON
 * answer for the endpoints that are not model requests (stored responses, the catalog, claim, rotation,
 * image status), and counts each in the request metrics when it ends. Every answer that leaves the frame
 * once the key is known carries the account's available balance: read by admission, or read here.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { KeyRecord } from '../core/key-record.ts'
import { log } from '../core/log.ts'
import { authenticate, authenticateRequest, presentedKey } from './authenticate.ts'
import { newCall, type ApiStyle, type Call } from '../core/call.ts'
import type { Gateway } from './gateway.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { availableBalance } from './admit.ts'
import { BALANCE_HEADER, errorResponse, serviceHeaders, type ErrorRenderer } from './respond.ts'
import { recordCall } from './settle.ts'
import { readJsonBody, type BodyResult } from './read-body.ts'

export type Frame = {
  render: ErrorRenderer
  /** The style's own headers, on every answer. */
  headers?: Record<string, string>
  /** What went wrong, for the client, when the stages failed unexpectedly; also undoes what must be. */
  failed: (call: Call) => ServiceError
  /** The stages count the request in the metrics themselves (when its hold ends); else it is counted here. */
  countedByStages?: boolean
}

/**
 * A request's body, read before the request takes a place under the ceiling: a client that sends it
 * slowly, or stops halfway, holds its own connection only, so a few thousand of them cannot refuse every
 * other request. A client gone before its body arrived gets nothing to read: recorded as 499.
 */
export async function bodyBeforeCeiling(
  request: Request,
  call: Call,
): Promise<BodyResult | Response> {
  const raw = await readJsonBody(request).catch(() => undefined)
  if (raw) return raw
  call.status = 499
  recordCall(call)
  return new Response(null, { status: 499 })
}

export async function withinCeiling(
  gw: Gateway,
  call: Call,
  request: Request,
  frame: Frame,
  run: () => Promise<Response>,
): Promise<Response> {
  if (!gw.ceiling.enter()) {
    const response = errorResponse(
      call,
      new ServiceError(
        'overloaded',
        'The gateway is at its concurrent-request limit. Retry after 5 seconds.',
      ),
      frame.render,
      frame.headers,
    )
    recordCall(call)
    return response
  }
  let released = false
  call.releaseSlot = () => {
    if (released) return
    released = true
    gw.ceiling.leave()
  }
  try {
    return await withBalance(gw, call, request, await run())
  } catch (error) {
    log.error('request failed unexpectedly', { requestId: call.requestId, error })
    return withBalance(
      gw,
      call,
      request,
      errorResponse(call, frame.failed(call), frame.render, frame.headers),
    )
  } finally {
    if (!call.streamOwnsSlot) call.releaseSlot()
    if (!frame.countedByStages) recordCall(call)
  }
}

/**
 * The balance header on an answer that did not reach admission: of the key's account once the key stage
 * found it; for a request refused before that stage (its body), of the account of the key it carries,
 * if that is a valid key (looked up only, so an invalid one is not counted twice).
 */
async function withBalance(
  gw: Gateway,
  call: Call,
  request: Request,
  response: Response,
): Promise<Response> {
  if (call.availableNano !== undefined) return response
  let key = call.key
  if (
    key === undefined &&
    response.status !== 401 &&
    response.status !== 403 &&
    response.status !== 503
  ) {
    // A suspended account's key is found too: its balance goes on the answer as well.
    key = (await authenticate(presentedKey(request.headers, true), gw.keys, gw.clock.now())).key
  }
  if (key === undefined) return response
  const available = await availableBalance(gw.store, gw.sql, key.accountId)
  if (available !== undefined)
    response.headers.set(BALANCE_HEADER, nanoToUsd(Math.max(0, available)))
  return response
}

/** What a key endpoint answers: a JSON body, 200 unless it says otherwise. */
export type JsonAnswer = { body: unknown; status?: number }

export type KeyEndpoint = {
  style: ApiStyle
  /** The error shape, for the request's ID. */
  render: (requestId: string) => ErrorRenderer
  /** The client's address, read only when the invalid-key limit needs it. */
  address: () => string
  /** Whether the key may come as `x-api-key` (Messages-style clients). */
  allowXApiKey?: boolean
  /** The style's own headers (`request-id` for Messages-style clients), on every answer. */
  headers?: (requestId: string) => Record<string, string>
}

/** Runs `handle` for the request's key; a ServiceError it throws is the answer, in the endpoint's error shape. */
export function keyEndpoint(
  gw: Gateway,
  request: Request,
  endpoint: KeyEndpoint,
  handle: (key: KeyRecord, call: Call) => Promise<JsonAnswer>,
): Promise<Response> {
  const call = newCall(endpoint.style)
  const render = endpoint.render(call.requestId)
  const headers = endpoint.headers?.(call.requestId)
  const failed = () => new ServiceError('internal_error', 'The gateway failed unexpectedly. Retry.')
  const answer = async (): Promise<Response> => {
    const auth = await authenticateRequest(gw, request, {
      allowXApiKey: endpoint.allowXApiKey ?? false,
      address: endpoint.address,
    })
    call.key = auth.key
    if (!auth.ok) return errorResponse(call, auth.error, render, headers)
    try {
      const { body, status = 200 } = await handle(auth.key, call)
      call.status = status
      return Response.json(body, {
        status,
        headers: { ...serviceHeaders(call, call.chargedNano), ...headers },
      })
    } catch (error) {
      if (error instanceof ServiceError) return errorResponse(call, error, render, headers)
      throw error
    }
  }
  return withinCeiling(gw, call, request, { render, failed, headers }, answer)
}
