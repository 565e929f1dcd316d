/**
 * The dashboard playground's chat, in two kinds the user chooses explicitly:
 *
 *  free (`paid` absent or false)  the trial: FREE_CHAT_MESSAGES per account, on FREE_CHAT_MODEL (Auto Free
 *                                 by default) or another free model; one at a time per account (409
 *                                 request_in_progress); used up → 402 trial_exhausted. When free chat cannot
 *                                 be served the refusal says so: no paid request is ever substituted.
 *  paid (`paid: true`)            any model the account may use, charged to its balance like an API request.
 *
 * Both run the gateway's pipeline in process as the account's playground key (playground-key.ts), so
 * limits, holds, charges, the request log and the usage rollup apply exactly as for API requests.
 * Answers are JSON, or with `stream: true` the Chat Completions event stream as the gateway sends it.
 */
import { errorTable, ServiceError, type ErrorCode } from '../../../shared/errors.ts'
import type { PlaygroundAnswer, PlaygroundChat } from '../../../shared/schemas/admin/playground.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import type { Gateway } from '../../pipeline/gateway.ts'
import { handle } from '../../pipeline/pipeline.ts'
import type { KeyRecord } from '../../core/key-record.ts'
import { log } from '../../core/log.ts'
import { siteError } from '../../pipeline/respond.ts'
import { chatStyle } from '../../pipeline/styles/chat/style.ts'
import type { ChatLock } from './chat-lock.ts'
import { isFreeChoice } from './free-model.ts'
import { playgroundKey } from './playground-key.ts'
import { giveBackTrialMessage, readTrial, takeTrialMessage } from './trial.ts'

export type PlaygroundDeps = {
  gateway: Gateway
  lock: ChatLock
  /** FREE_CHAT_MESSAGES: free messages per account. */
  freeMessages: number
  /** FREE_CHAT_MODEL: what free chat uses when the request names no free model. */
  freeModel: string
  /** Bound on a free chat lock whose process died holding it. */
  lockTtlMs: number
}

type Deps = OperatorDeps & { playground: PlaygroundDeps }

/** Refusals that mean the free service cannot answer now (as opposed to a problem with the request). */
const UNAVAILABLE: ReadonlySet<ErrorCode> = new Set([
  'auto_unresolvable',
  'model_unavailable',
  'model_alias_unavailable',
  'no_available_route',
  'upstream_rate_limited',
  'upstream_capacity_unavailable',
  'upstream_response_invalid',
  'upstream_error',
  'request_timeout',
  'overloaded',
  'admission_unconfirmed',
  'internal_error',
])

/** How long an answer waits for its settle before it is delivered anyway (the lock stays until the settle). */
const SETTLE_WAIT_MS = 5_000

const unavailable = (why: string) =>
  `Free chat is temporarily unavailable (${why}). No paid request was made; you can choose paid chat to continue with a paid model.`

export async function playgroundChat(
  deps: Deps,
  accountId: string,
  chat: PlaygroundChat,
  signal: AbortSignal,
): Promise<Response> {
  return chat.paid === true
    ? paidChat(deps, accountId, chat, signal)
    : freeChat(deps, accountId, chat, signal)
}

async function paidChat(
  deps: Deps,
  accountId: string,
  chat: PlaygroundChat,
  signal: AbortSignal,
): Promise<Response> {
  if (!chat.model)
    throw new ServiceError(
      'invalid_request',
      'model: paid chat needs a model (a model ID, @preset/<slug> or service/auto…).',
      { param: 'model' },
    )
  const key = await playgroundKey(deps, accountId)
  const response = await send(deps.playground.gateway, key, chat.model, chat, signal)
  if (!response.ok) return refusal(response)
  const requestId = response.headers.get('x-request-id')!
  if (chat.stream) return response
  return answer(deps, accountId, response, requestId, true)
}

async function freeChat(
  deps: Deps,
  accountId: string,
  chat: PlaygroundChat,
  signal: AbortSignal,
): Promise<Response> {
  const { playground, catalog } = deps
  const model = chat.model ?? playground.freeModel
  if (chat.model && !isFreeChoice(catalog, chat.model)) {
    throw new ServiceError(
      'invalid_request',
      `model: free chat uses free models only (such as ${playground.freeModel}); choose paid chat to use ${chat.model}.`,
      { param: 'model' },
    )
  }
  if (!isFreeChoice(catalog, model)) {
    log.warn('FREE_CHAT_MODEL is not a free choice of the catalog; free chat is refused', { model })
    throw new ServiceError('auto_unresolvable', unavailable('no free model is configured'))
  }
  const token = await playground.lock.acquire(accountId, playground.lockTtlMs).catch((error) => {
    log.warn('free chat lock unavailable', { accountId, error })
    throw new ServiceError(
      'admission_unconfirmed',
      'Free chat could not start (its lock could not be taken); nothing was sent. Retry.',
    )
  })
  if (!token) {
    throw new ServiceError(
      'request_in_progress',
      'A free chat message of this account is still running or settling. Wait until it has finished, then send the next one.',
    )
  }
  let handedOver = false
  const unlock = () =>
    playground.lock
      .release(accountId, token)
      .catch((error) => log.warn('free chat lock not released; it expires', { accountId, error }))
  try {
    const key = await playgroundKey(deps, accountId)
    if ((await takeTrialMessage(deps.sql, accountId, playground.freeMessages)) === undefined) {
      throw new ServiceError(
        'trial_exhausted',
        `The ${playground.freeMessages} free chat messages of this account are used. Add credits and choose paid chat to continue.`,
      )
    }
    const response = await send(playground.gateway, key, model, chat, signal)
    const requestId = response.headers.get('x-request-id') ?? ''
    // The lock is held until the request's hold has ended (settled or released): "running or settling".
    // The answer waits for that, but not for long if the store is slow to confirm the settle.
    const ended = () =>
      Promise.race([
        playground.gateway.inflight.ended(requestId).then(unlock),
        Bun.sleep(SETTLE_WAIT_MS),
      ])
    if (!response.ok) {
      await giveBackTrialMessage(deps.sql, accountId)
      const refused = await refusal(response, true)
      handedOver = true
      void ended()
      return refused
    }
    if (chat.stream) {
      handedOver = true
      return withEnd(response, ended)
    }
    const result = await answer(deps, accountId, response, requestId, false)
    handedOver = true
    await ended()
    return result
  } finally {
    if (!handedOver) await unlock()
  }
}

/** The pipeline, in process, as the playground key: a Chat Completions request built from the playground's fields. */
function send(
  gw: Gateway,
  key: KeyRecord,
  model: string,
  chat: PlaygroundChat,
  signal: AbortSignal,
): Promise<Response> {
  const body = {
    model,
    messages: chat.messages,
    ...(chat.maxTokens === undefined ? {} : { max_completion_tokens: chat.maxTokens }),
    ...(chat.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  }
  const request = new Request('http://playground.internal/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  })
  return handle(gw, chatStyle, request, () => 'playground', key)
}

/** A JSON answer: the completion with what the dashboard shows beside it (cost, balance, free messages left). */
async function answer(
  deps: Deps,
  accountId: string,
  response: Response,
  requestId: string,
  paid: boolean,
): Promise<Response> {
  const completion: unknown = await response.json()
  const { playground } = deps
  const result: PlaygroundAnswer = {
    requestId,
    paid,
    model: response.headers.get('x-service-model'),
    costUsd: response.headers.get('x-service-cost-usd') ?? '0',
    balanceUsd: response.headers.get('x-service-balance-usd'),
    trial: await readTrial(deps.sql, deps.catalog, accountId, playground),
    completion,
  }
  return Response.json(result, { headers: { 'x-request-id': requestId } })
}

/**
 * The gateway's refusal in the admin API's error shape, with its request ID. For free chat, a refusal that
 * means "cannot serve now" says so and that nothing paid was tried instead.
 */
async function refusal(response: Response, free = false): Promise<Response> {
  const header = response.headers.get('x-service-error-code') ?? 'internal_error'
  const code: ErrorCode = header in errorTable ? (header as ErrorCode) : 'internal_error'
  const body = (await response.json().catch(() => ({}))) as {
    error?: { message?: string; param?: string | null }
  }
  const message = body.error?.message ?? 'The request failed.'
  const retryAfter = Number(response.headers.get('retry-after'))
  const error = new ServiceError(
    code,
    free && UNAVAILABLE.has(code) ? unavailable(message.replace(/\.$/, '')) : message,
    {
      param: body.error?.param ?? undefined,
      retryAfterMs: retryAfter > 0 ? retryAfter * 1000 : undefined,
    },
  )
  const rendered = siteError(error)
  const requestId = response.headers.get('x-request-id')
  if (requestId) rendered.headers.set('x-request-id', requestId)
  return rendered
}

/**
 * The same response, calling `done` once its body has been read to the end or cancelled. At the end the
 * stream closes only after `done` resolved, so a client that read the whole answer may send the next
 * message at once.
 */
function withEnd(response: Response, done: () => Promise<void>): Response {
  const reader = response.body!.getReader()
  let finished: Promise<void> | undefined
  const finish = () => (finished ??= done())
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: end, value } = await reader.read()
        if (!end) return controller.enqueue(value)
        await finish()
        controller.close()
      } catch (error) {
        controller.error(error)
        void finish()
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined)
      void finish()
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}
