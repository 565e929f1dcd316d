/**
 * What the pipeline needs from a client API style: its envelope and error shape, what it asks for
 * (model, fallbacks, stream, output limit), how big its prompt is, the neutral conversation it means
 * (for a provider of another style), and how answers and streams are written back to it. A style that
 * shares a provider style's wire format passes bodies and events through for that provider.
 */
import type { ServiceError } from '../../../shared/errors.ts'
import type { ProviderStyle } from '../../core/catalog/catalog-types.ts'
import type { TokenUsage } from '../../core/catalog/pricing.ts'
import type { ApiStyle } from '../../core/call.ts'
import type { Prompt } from '../estimate.ts'
import type { Envelope } from '../validate.ts'
import type { StreamOutput } from '../streams/stream-output.ts'
import type { Answer } from '../../core/neutral/answer.ts'
import type { Conversation } from '../../core/neutral/conversation.ts'
import type { PresetParams } from '../../../shared/schemas/admin/policy.ts'
import type { TextVisitor } from '../../core/texts.ts'

export type Requested = {
  model: string
  fallbacks: string[]
  stream: boolean
  /** The output limit the client set, if any. */
  outputTokens: number | undefined
}

/** What the writers of answers and streams know of the request. */
export type AnswerContext<Body> = {
  requestId: string
  accountId: string
  body: Body
  /** The catalog ID of the model that served. */
  modelId: string
  /** Unix seconds at the start of the request. */
  created: number
}

export type Charged = { usage: TokenUsage; costUsd: number }

/** How a style passes a native provider's bodies and events through. */
export type Passthrough<Body> = {
  provider: ProviderStyle
  /** Client headers of the style that a provider of the style receives as sent (never the key). */
  headers?: readonly string[]
  /** What a provider receives of such a header's value; undefined: the header is not sent. */
  headerValue?(name: string, value: string): string | undefined
  /** The client's own body without the gateway's fields. */
  body(body: Body): Record<string, unknown>
  /** The provider's non-streaming answer, with the cost added to its usage. */
  answer(
    json: Record<string, unknown>,
    charged: Charged,
    context: AnswerContext<Body>,
  ): Record<string, unknown>
  stream(context: AnswerContext<Body>): StreamOutput
}

export type ClientStyle<Body> = {
  name: ApiStyle
  passthrough?: Passthrough<Body>
  envelope: Envelope<Body>
  /** Whether the key may come as `x-api-key` (the Messages style). */
  allowXApiKey: boolean
  errorBody(error: ServiceError, requestId: string): string
  /** Headers of the style on every response (beside the gateway's own). */
  headers(requestId: string): Record<string, string>
  requested(body: Body): Requested
  /** The request field that lists fallback models (`models` or `fallbacks`). */
  fallbacksField: string
  /** The request field that limits the output, for messages that tell the client to lower it. */
  outputLimitField: string
  /** The `provider` preferences object, for the styles that have one. */
  providerPrefs?(body: Body): Record<string, unknown> | undefined
  /** Sets a preset's default parameters where the request sets none. */
  applyDefaults(body: Body, params: PresetParams): void
  /** Whether the request offers the model tools. */
  usesTools(body: Body): boolean
  /** Visits every text the client sent for the model to read (guardrails inspect and redact these). */
  texts(body: Body, visit: TextVisitor): void
  /**
   * Visits the texts the request carries from earlier requests (the stored conversation it continues),
   * which reach the provider with it: guardrails inspect and redact them, the context counts them.
   */
  keptTexts?(body: Body, visit: TextVisitor): void
  /** Loads what the request refers to (a stored response) once the account is known; may refuse. */
  prepare?(body: Body, accountId: string): Promise<ServiceError | undefined>
  /** The prompt's size, after `prepare`. */
  measure(body: Body, bytes: number): Prompt
  /** The neutral conversation the body means, or why it cannot be translated. */
  conversation(body: Body): Conversation | ServiceError
  /** A non-streaming answer from a provider of another style. */
  renderAnswer(
    answer: Answer,
    charged: Charged,
    context: AnswerContext<Body>,
  ): Record<string, unknown>
  /** The stream writer for a provider of another style. */
  streamOutput(context: AnswerContext<Body>): StreamOutput
}
