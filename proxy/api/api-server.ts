/**
 * The API server ({base_url}): the model endpoints under /v1 and their /api/v1 alias. Route handlers
 * only hand the raw request to the style's pipeline; bodies are read by the pipeline itself (parse:
 * 'none') so the size limit and the error shape stay the gateway's.
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { handle } from '../gateway/pipeline.ts'
import { chatStyle } from '../styles/chat/style.ts'
import type { Gateway } from '../gateway/gateway.ts'
import { newCall } from '../gateway/call.ts'
import { errorResponse } from '../gateway/respond.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'

function modelRoutes(gw: Gateway, prefix: string) {
  return new Elysia({ prefix }).post('/chat/completions', ({ request }) => handle(gw, chatStyle, request), { parse: 'none' })
}

export function apiServer(gw: Gateway) {
  return new Elysia({ name: 'api' })
    .use(modelRoutes(gw, '/v1'))
    .use(modelRoutes(gw, '/api/v1'))
    .onError(({ code, request, error }) => {
      if (code === 'NOT_FOUND') return unknownPath(request)
      const failure = new ServiceError('internal_error', 'The gateway failed unexpectedly. Retry.')
      if (code !== 'VALIDATION' && code !== 'PARSE') console.error(error)
      return errorResponse(newCall('chat'), failure, chatErrorBody)
    })
}

const modelPaths = new Set(['/v1/chat/completions', '/api/v1/chat/completions'])

/** Unknown paths get the gateway's error shape; a base URL that already ends in /chat/completions is named as such. */
export function unknownPath(request: Request): Response {
  const path = new URL(request.url).pathname.replace(/\/+$/, '')
  const call = newCall('chat')
  if (modelPaths.has(path)) {
    return errorResponse(call, new ServiceError('not_found', `${request.method} is not supported at ${path}; use POST.`), chatErrorBody)
  }
  if (path.includes('/chat/completions')) {
    const error = new ServiceError(
      'invalid_request',
      `Wrong base URL: ${path} is not an endpoint. Set the client's base URL to the API root ending in /v1, without /chat/completions.`,
    )
    return errorResponse(call, error, chatErrorBody)
  }
  return errorResponse(call, new ServiceError('not_found', `No endpoint at ${request.method} ${path}.`), chatErrorBody)
}
