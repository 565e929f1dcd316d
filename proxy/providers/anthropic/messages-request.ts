/**
 * The request an Anthropic-style provider receives: `baseUrl + /v1/messages`, the provider's key as
 * `x-api-key` with a fixed `anthropic-version`, and the client's body with the provider's model name
 * (same style, with the client's `anthropic-beta`, which the fixed headers override) or the conversation
 * encoded. The style requires `max_tokens`: without one from the client,
 * the model's maximum output is sent (the hold already covers it).
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Route } from '../../core/catalog/catalog-types.ts'
import type { Payload, UpstreamRequest } from '../adapter.ts'
import { conversationToMessages } from './to-messages-body.ts'

export const ANTHROPIC_VERSION = '2023-06-01'

export function messagesUpstreamRequest(
  route: Route,
  payload: Payload,
  stream: boolean,
): UpstreamRequest | ServiceError {
  const body =
    payload.kind === 'conversation'
      ? conversationToMessages(payload.conversation, route.upstreamModel, route.maxOutputTokens)
      : { ...payload.body, model: route.upstreamModel }
  if (body instanceof ServiceError) return body
  return {
    url: `${route.provider.baseUrl}/v1/messages`,
    init: {
      method: 'POST',
      headers: {
        ...(payload.kind === 'raw' ? payload.headers : undefined),
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        ...(route.provider.apiKey ? { 'x-api-key': route.provider.apiKey } : {}),
        'anthropic-version': ANTHROPIC_VERSION,
      },
      body: JSON.stringify(body),
    },
  }
}
