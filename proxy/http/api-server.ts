/**
 * The API server ({base_url}): the model endpoints and the catalog under /v1 and their /api/v1 alias, and the two
 * account routes a key authenticates (POST /me/claim, POST /keys/:id/rotate). Model route handlers
 * only hand the raw request to the style's pipeline; bodies are read by the pipeline itself (parse:
 * 'none') so the size limit and the error shape stay the gateway's.
 */
import { Elysia } from 'elysia'
import type { AdminDeps } from './admin/admin-deps.ts'
import { ServiceError } from '../../shared/errors.ts'
import { handle } from '../pipeline/pipeline.ts'
import { chatStyle } from '../pipeline/styles/chat/style.ts'
import { messagesStyle } from '../pipeline/styles/messages/style.ts'
import { withThreads } from '../pipeline/styles/messages/threads.ts'
import { countMessagesTokens } from '../pipeline/styles/messages/count-tokens.ts'
import { messagesErrorBody } from '../pipeline/styles/messages/render-error.ts'
import { responsesStyle } from '../pipeline/styles/responses/style.ts'
import { countResponsesInputTokens } from '../pipeline/styles/responses/input-tokens.ts'
import { addressTrust, clientAddress, type AddressTrust } from './client-address.ts'
import { responsesRoutes } from './responses-routes.ts'
import { catalogRoutes } from './catalog-routes.ts'
import { imageRoutes } from './image-routes.ts'
import type { Gateway } from '../pipeline/gateway.ts'
import { newCall } from '../core/call.ts'
import { errorResponse } from '../pipeline/respond.ts'
import { chatErrorBody } from '../pipeline/styles/chat/render-error.ts'
import { log } from '../core/log.ts'
import { opsRoutes, type OpsDeps } from './ops-routes.ts'
import { claimRoutes } from './claim-routes.ts'
import { keyRotationRoute } from './key-rotation-route.ts'

function modelRoutes(gw: Gateway, prefix: string, trust: AddressTrust) {
  const responses = responsesStyle(gw.responses)
  const messages = withThreads(messagesStyle, gw.responses)
  return new Elysia({ prefix })
    .post(
      '/chat/completions',
      ({ request, server }) =>
        handle(gw, chatStyle, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .post(
      '/messages',
      ({ request, server }) =>
        handle(gw, messages, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .post(
      '/messages/count_tokens',
      ({ request, server }) =>
        countMessagesTokens(gw, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .post(
      '/responses',
      ({ request, server }) =>
        handle(gw, responses, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .post(
      '/responses/input_tokens',
      ({ request, server }) =>
        countResponsesInputTokens(gw, request, () => clientAddress(server, request, trust)),
      { parse: 'none' },
    )
    .use(catalogRoutes(gw, trust))
    .use(responsesRoutes(gw, trust))
    .use(imageRoutes(gw, trust))
}

/** `admin`: for the account routes the spec puts on the API server (/me/claim, /keys/:id/rotate). */
export function apiServer(gw: Gateway, ops: OpsDeps, admin: AdminDeps) {
  const trust = addressTrust(admin.config)
  return new Elysia({ name: 'api' })
    .use(opsRoutes(ops))
    .use(modelRoutes(gw, '/v1', trust))
    .use(modelRoutes(gw, '/api/v1', trust))
    .use(claimRoutes(gw, admin))
    .use(keyRotationRoute(gw, admin))
    .onError(({ code, request, error }) => {
      if (code === 'NOT_FOUND') return unknownPath(request)
      const failure = new ServiceError('internal_error', 'The gateway failed unexpectedly. Retry.')
      const call = newCall('chat')
      if (code !== 'VALIDATION' && code !== 'PARSE')
        log.error('request failed unexpectedly', {
          requestId: call.requestId,
          path: new URL(request.url).pathname,
          error,
        })
      return errorResponse(call, failure, chatErrorBody)
    })
}

const modelPaths = new Set(
  ['chat/completions', 'messages', 'responses'].flatMap((path) => [
    `/v1/${path}`,
    `/api/v1/${path}`,
  ]),
)

/** Paths of the Messages style, whose clients read errors in the Messages shape. */
const messagesPath = /^(?:\/api)?\/v1\/messages(?:\/|$)/

/**
 * Unknown paths get the gateway's error shape (the Messages one under /v1/messages); a base URL that
 * already ends in /chat/completions is named as such.
 */
export function unknownPath(request: Request): Response {
  const path = new URL(request.url).pathname.replace(/\/+$/, '')
  if (messagesPath.test(path)) {
    const call = newCall('messages')
    const error = modelPaths.has(path)
      ? new ServiceError('not_found', `${request.method} is not supported at ${path}; use POST.`)
      : new ServiceError('not_found', `No endpoint at ${request.method} ${path}.`)
    return errorResponse(
      call,
      error,
      (failure) => messagesErrorBody(failure, call.requestId),
      messagesStyle.headers(call.requestId),
    )
  }
  const call = newCall('chat')
  if (modelPaths.has(path)) {
    return errorResponse(
      call,
      new ServiceError('not_found', `${request.method} is not supported at ${path}; use POST.`),
      chatErrorBody,
    )
  }
  if (path.includes('/chat/completions')) {
    const error = new ServiceError(
      'invalid_request',
      `Wrong base URL: ${path} is not an endpoint. Set the client's base URL to the API root ending in /v1, without /chat/completions.`,
    )
    return errorResponse(call, error, chatErrorBody)
  }
  return errorResponse(
    call,
    new ServiceError('not_found', `No endpoint at ${request.method} ${path}.`),
    chatErrorBody,
  )
}
