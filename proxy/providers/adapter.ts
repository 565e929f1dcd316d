/**
 * What a provider style offers the pipeline: the request for a route (the client's body passed through
 * when the styles match, else encoded from the neutral conversation), the answer read back in neutral
 * form, a decoder for its stream events, and the mapping of its error responses.
 */
import type { ServiceError } from '../../shared/errors.ts'
import type { Route } from '../core/catalog/catalog-types.ts'
import type { Answer, StreamEvent } from '../core/neutral/answer.ts'
import type { Conversation } from '../core/neutral/conversation.ts'
import type { SseEvent } from './sse.ts'
import type { UpstreamFailure } from './upstream-failure.ts'

/** The HTTP request to a provider, built by its adapter. */
export type UpstreamRequest = { url: string; init: RequestInit }

/**
 * Lowers the body's output limits (`fields`) that ask for more than the route's model can write to its
 * maximum, which the hold already assumed: the provider would refuse the request, and a fallback to a
 * model with a smaller maximum would fail where the client asked for nothing it could not have.
 */
export function capOutputLimits(
  body: Record<string, unknown>,
  fields: readonly string[],
  route: Route,
): void {
  for (const field of fields) {
    const value = body[field]
    if (typeof value === 'number' && value > route.maxOutputTokens)
      body[field] = route.maxOutputTokens
  }
}

/** The body to send: the client's own (same style, gateway fields removed) or a conversation to encode. */
export type Payload =
  | {
      kind: 'raw'
      body: Record<string, unknown>
      /** Client headers of the style that the provider receives as sent (`anthropic-beta`); never the key. */
      headers?: Record<string, string>
    }
  | { kind: 'conversation'; conversation: Conversation }

export type AnswerRead =
  | { ok: true; answer: Answer; json: Record<string, unknown> }
  | { ok: false; error: ServiceError; usage: Answer['usage'] }

export type StreamDecoder = { decode(event: SseEvent): StreamEvent[] }

export type ProviderAdapter = {
  request(route: Route, payload: Payload, stream: boolean): UpstreamRequest | ServiceError
  readAnswer(text: string): AnswerRead
  streamDecoder(): StreamDecoder
  failure(providerId: string, status: number, body: string): UpstreamFailure
}
