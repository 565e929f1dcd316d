/**
 * The requests an Anthropic-style provider receives: `baseUrl + /v1/messages` (and its token count,
 * `/v1/messages/count_tokens`), the provider's key as `x-api-key` with a fixed `anthropic-version`, and
 * the client's body with the provider's model name (same style, with the client's `anthropic-beta`,
 * which the fixed headers override) or the conversation encoded. The style requires `max_tokens`: without
 * one from the client, the model's maximum output is sent (the hold already covers it), and one above it
 * is lowered to it.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Route } from '../../core/catalog/catalog-types.ts'
import { capOutputLimits, type Payload, type UpstreamRequest } from '../adapter.ts'
import { conversationToMessages } from './to-messages-body.ts'

export const ANTHROPIC_VERSION = '2023-06-01'

/** What a token count reads: the input. Output limit, sampling and streaming do not change it. */
const COUNTED_FIELDS = [
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'mcp_servers',
  'context_management',
]

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
  capOutputLimits(body, ['max_tokens'], route)
  return {
    url: `${route.provider.baseUrl}/v1/messages`,
    init: {
      method: 'POST',
      headers: providerHeaders(
        route,
        stream ? 'text/event-stream' : 'application/json',
        payload.kind === 'raw' ? payload.headers : undefined,
      ),
      body: JSON.stringify(body),
    },
  }
}

/** The provider's count of a Messages body's input tokens (the client's body, gateway fields removed). */
export function countTokensUpstreamRequest(
  route: Route,
  body: Record<string, unknown>,
  clientHeaders?: Record<string, string>,
): UpstreamRequest {
  const counted: Record<string, unknown> = { model: route.upstreamModel }
  for (const field of COUNTED_FIELDS) if (body[field] !== undefined) counted[field] = body[field]
  return {
    url: `${route.provider.baseUrl}/v1/messages/count_tokens`,
    init: {
      method: 'POST',
      headers: providerHeaders(route, 'application/json', clientHeaders),
      body: JSON.stringify(counted),
    },
  }
}

function providerHeaders(
  route: Route,
  accept: string,
  clientHeaders: Record<string, string> | undefined,
): Record<string, string> {
  return {
    ...clientHeaders,
    'content-type': 'application/json',
    accept,
    ...(route.provider.apiKey ? { 'x-api-key': route.provider.apiKey } : {}),
    'anthropic-version': ANTHROPIC_VERSION,
  }
}
