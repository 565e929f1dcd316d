/**
 * Stage 9: the answer, in the client's style. Non-streaming: the provider's body is checked, its usage
 * (or the gateway's count) priced, and written back with the cost; the settle goes out before the
 * response. Streaming: the relay forwards events as they arrive and settles when the stream ends.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { TokenUsage } from '../core/catalog/pricing.ts'
import { costNano } from '../core/catalog/pricing.ts'
import type { TokenizerName } from '../core/catalog/tokenizers.ts'
import { nanoToUsd } from '../../shared/money.ts'
import { adapters } from '../providers/adapters.ts'
import type { Served } from '../providers/dispatch.ts'
import { DeliveredOutput } from './streams/delivered-output.ts'
import { relayStream, type StreamOutcome } from './streams/relay.ts'
import type { AnswerContext, ClientStyle } from './styles/client-style.ts'
import type { AnswerPart } from '../core/neutral/answer.ts'
import type { Call } from '../core/call.ts'
import { inputBound, plausibleUsage, usageLimitTokens, type Estimate } from './estimate.ts'
import { log } from '../core/log.ts'
import { countPromptTokens, type PromptSize } from '../policy/routing/context.ts'
import type { Gateway } from './gateway.ts'
import { errorResponse, serviceHeaders } from './respond.ts'
import { finishCall } from './settle.ts'

/** Output under this many tokens when a stream breaks: the whole charge is written off (spec). */
const WRITE_OFF_BELOW_TOKENS = 50

export type Dispatched<Body> = {
  body: Body
  estimate: Estimate
  served: Served
  /** The prompt's texts and overhead, counted when the provider reports no usage. */
  prompt: Pick<PromptSize, 'overheadTokens' | 'toolPromptTokens' | 'texts'>
  /** Available balance after this request's hold, as admission reported it. */
  admittedAvailableNano: number
  /** The style's own headers. */
  headers: Record<string, string>
}

export async function respondWithAnswer<Body>(
  gw: Gateway,
  style: ClientStyle<Body>,
  call: Call,
  dispatched: Dispatched<Body>,
): Promise<Response> {
  const { served, estimate } = dispatched
  const model = served.candidate.model
  call.served = { model, route: served.route }
  const adapter = adapters[served.route.provider.style]
  const passthrough =
    style.passthrough?.provider === served.route.provider.style ? style.passthrough : undefined
  const price = (usage: TokenUsage) => costNano(model.pricing, usage)
  /** The gateway's count of the input, for a provider that reports no usage. */
  const countInput = async () =>
    Math.min(
      await countPromptTokens(
        dispatched.prompt,
        model.tokenizer,
        served.route.provider.style === 'anthropic',
      ),
      model.contextLength,
    )
  const context: AnswerContext<Body> = {
    requestId: call.requestId,
    accountId: call.key!.accountId,
    body: dispatched.body,
    modelId: model.id,
    created: Math.floor(call.startedAtMs / 1000),
  }

  if (served.reader && served.head) {
    call.status = 200
    call.firstByteMs = Math.round(performance.now() - call.startedAt)
    call.streamOwnsSlot = true
    gw.inflight.setCut(call.requestId, () =>
      served.controller.abort(
        new ServiceError(
          'upstream_error',
          'The gateway is shutting down and cut the answer before it finished; the answer is incomplete. Retry.',
        ),
      ),
    )
    const stream = relayStream({
      head: served.head,
      reader: served.reader,
      upstream: served.controller,
      decoder: adapter.streamDecoder(),
      output: passthrough ? passthrough.stream(context) : style.streamOutput(context),
      idleTimeoutMs: gw.limits.streamIdleTimeoutMs,
      holdNano: call.holdNano,
      inputBoundTokens: inputBound(estimate, model),
      usageLimitTokens: usageLimitTokens(model),
      countInput,
      pricing: model.pricing,
      tokenizer: model.tokenizer,
      price,
      onEnd: (outcome) => endStream(gw, call, outcome, price),
    })
    const headers = {
      ...serviceHeaders(call),
      ...dispatched.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    }
    return new Response(stream, { status: 200, headers })
  }

  const read = adapter.readAnswer(served.body!)
  const render = (error: Parameters<typeof style.errorBody>[0]) =>
    style.errorBody(error, call.requestId)
  if (!read.ok) {
    // Only the provider's own usage is charged for an answer that failed validation.
    const response = errorResponse(call, read.error, render, dispatched.headers)
    void finishCall(
      gw,
      call,
      read.usage
        ? { kind: 'charge', usage: read.usage, costNano: price(read.usage), forgive: false }
        : { kind: 'release' },
    )
    return response
  }
  let reported = read.answer.usage
  if (reported && !plausibleUsage(reported, usageLimitTokens(model))) {
    log.warn('provider usage ignored: more tokens than the model can take', {
      requestId: call.requestId,
      provider: served.route.provider.id,
      inputTokens: reported.inputTokens,
      outputTokens: reported.outputTokens,
    })
    // The client is shown the usage it is charged for, passed through or not.
    delete read.json.usage
    reported = undefined
  }
  const usage =
    reported ??
    counted(await countInput(), await outputTokensOf(read.answer.parts, model.tokenizer))
  const costOfAnswer = price(usage)
  const chargedNano = Math.min(costOfAnswer, call.holdNano)
  // The settle goes out before the response; its answer is not awaited. The balance header is the one
  // admission reported, with this request's hold replaced by its charge.
  call.availableNano = dispatched.admittedAvailableNano + call.holdNano - chargedNano
  call.status = 200
  void finishCall(gw, call, { kind: 'charge', usage, costNano: costOfAnswer, forgive: false })
  const charged = { usage, costUsd: Number(nanoToUsd(chargedNano)) }
  const answer = passthrough
    ? passthrough.answer(read.json, charged, context)
    : style.renderAnswer(read.answer, charged, context)
  const headers = {
    ...serviceHeaders(call, chargedNano),
    ...dispatched.headers,
    'content-type': 'application/json',
  }
  return new Response(JSON.stringify(answer), { status: 200, headers })
}

function endStream(
  gw: Gateway,
  call: Call,
  outcome: StreamOutcome,
  price: (usage: TokenUsage) => number,
): number {
  call.releaseSlot()
  if (outcome.failure) {
    call.status = outcome.failure.status
    call.errorCode = outcome.failure.code
  } else if (outcome.end === 'client_closed') {
    call.status = 499
  }
  const usage = outcome.usage
  // A stream the provider broke is charged for what was delivered, and under 50 output tokens not at
  // all; a client that went away pays for what it was sent.
  const forgive = outcome.end === 'upstream_failed' && usage.outputTokens < WRITE_OFF_BELOW_TOKENS
  const costNano = price(usage)
  void finishCall(gw, call, {
    kind: 'charge',
    usage,
    costNano,
    forgive,
    reason: forgive ? 'stream_broken_early' : undefined,
  })
  return forgive ? 0 : Math.min(costNano, call.holdNano)
}

/** The gateway's own count when the provider reported no usage: the prompt's and the output seen. */
function counted(inputTokens: number, outputTokens: number): TokenUsage {
  return {
    inputTokens,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens,
  }
}

/** The gateway's count of an answer's output, as for a stream: one token at least per part. */
async function outputTokensOf(
  parts: AnswerPart[],
  tokenizer: TokenizerName | undefined,
): Promise<number> {
  const output = new DeliveredOutput(tokenizer)
  for (const part of parts)
    output.add(part.type === 'text' ? part.text : part.name + part.arguments)
  return output.estimate()
}
