/**
 * The request an OpenAI-compatible provider receives for a Chat Completions call: the client's body with
 * the provider's model name, without the gateway's own fields, and, when streaming, with usage asked for
 * (the charge needs it; the relay drops it again if the client did not ask). The provider's key comes
 * from the catalog's environment variable; the client's key never leaves the gateway.
 */
import type { Route } from '../../catalog/catalog.ts'

export function buildChatUpstreamRequest(route: Route, body: Record<string, unknown>, stream: boolean): { url: string; init: RequestInit } {
  const { models: _models, provider: _provider, ...rest } = body
  const upstreamBody: Record<string, unknown> = { ...rest, model: route.upstreamModel }
  if (stream) {
    const options = typeof rest.stream_options === 'object' && rest.stream_options !== null ? rest.stream_options : {}
    upstreamBody.stream_options = { ...options, include_usage: true }
  }
  return {
    url: `${route.provider.baseUrl}/chat/completions`,
    init: {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        authorization: `Bearer ${route.provider.apiKey}`,
      },
      body: JSON.stringify(upstreamBody),
    },
  }
}
