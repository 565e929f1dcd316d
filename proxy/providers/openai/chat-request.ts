/**
 * The request an OpenAI-compatible provider receives: `baseUrl + /chat/completions`, the provider's key
 * from the catalog's environment variable (the client's key never leaves the gateway), and the client's
 * body with the provider's model name (same style) or the conversation encoded. A stream always asks
 * for usage: the charge needs it, and the relay drops it again when the client did not ask. An output
 * limit above the model's maximum is lowered to it.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Route } from '../../core/catalog/catalog-types.ts'
import { capOutputLimits, type Payload, type UpstreamRequest } from '../adapter.ts'
import { bearerHeaders } from './headers.ts'
import { conversationToChat } from './to-chat-body.ts'

export function chatUpstreamRequest(
  route: Route,
  payload: Payload,
  stream: boolean,
): UpstreamRequest | ServiceError {
  let body: Record<string, unknown>
  if (payload.kind === 'conversation') {
    const encoded = conversationToChat(payload.conversation, route.upstreamModel, route.reasoning)
    if (encoded instanceof ServiceError) return encoded
    body = encoded
    capOutputLimits(body, ['max_completion_tokens'], route)
  } else {
    body = { ...payload.body, model: route.upstreamModel }
    capOutputLimits(body, ['max_tokens', 'max_completion_tokens'], route)
    if (stream) {
      const options =
        typeof body.stream_options === 'object' && body.stream_options !== null
          ? body.stream_options
          : {}
      body.stream_options = { ...options, include_usage: true }
    }
  }
  return {
    url: `${route.provider.baseUrl}/chat/completions`,
    init: {
      method: 'POST',
      headers: bearerHeaders(
        route.provider.apiKey,
        stream ? 'text/event-stream' : 'application/json',
      ),
      body: JSON.stringify(body),
    },
  }
}
