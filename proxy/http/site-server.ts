/**
 * The site server ({site_url}): the dashboard's static files and the operator API. It is a separate
 * server from the API server, so CORS, cookies and sessions never touch the hot path. Every response
 * carries `Referrer-Policy: no-referrer` (dashboard links carry secrets in their fragment).
 */
import { Elysia } from 'elysia'
import { join } from 'node:path'
import { ServiceError } from '../../shared/errors.ts'
import { addressTrust, clientAddress } from './client-address.ts'
import { readCatalog, type CatalogReads } from '../policy/catalog-reads.ts'
import { listedModel, modelIdFromPath, unknownListedModel } from './catalog-routes.ts'
import { log } from '../core/log.ts'
import { opsRoutes, type OpsDeps } from './ops-routes.ts'
import { operatorRoutes } from './operator-routes.ts'
import type { AdminDeps } from './admin/admin-deps.ts'
import { adminRoutes } from './admin/admin-routes.ts'
import { emailConfirmPage } from './email-confirm-page.ts'
import { stripeWebhookRoute } from './stripe-webhook-route.ts'
import { siteError } from '../pipeline/respond.ts'
import { validationError } from './site-error.ts'
import { checkDepth, MAX_BODY_BYTES } from '../pipeline/read-body.ts'

/**
 * The most a request body to the site may carry: its forms and the operator's commands are small. The
 * playground's chat, a conversation, may be as large as an API request (32 MB). A body sent without
 * Content-Length is bounded by the server's own limit (app.ts).
 */
export const SITE_BODY_BYTES = 1024 * 1024
const PLAYGROUND_CHAT = '/admin/v1/playground/chat'

/** 413 before the body is read when its declared length passes the route's limit. */
function bodyTooLarge(request: Request): Response | undefined {
  const declared = Number(request.headers.get('content-length') ?? 0)
  const limit = new URL(request.url).pathname === PLAYGROUND_CHAT ? MAX_BODY_BYTES : SITE_BODY_BYTES
  if (!(declared > limit)) return undefined
  return siteError(
    new ServiceError(
      'payload_too_large',
      `Request body exceeds the ${limit / (1024 * 1024)} MB limit of this endpoint.`,
    ),
  )
}

/**
 * A parsed body nested more than 64 levels deep is refused, as on the API server, before any schema walks
 * it: the schema check's error report of a deeply nested body overflowed the stack after seconds of work,
 * which held up both servers.
 */
function refuseDeepBody(body: unknown): void {
  const tooDeep = typeof body === 'object' && body !== null ? checkDepth(body) : undefined
  if (tooDeep) throw tooDeep
}

export function siteServer(
  deps: AdminDeps,
  options: {
    operatorToken: string
    dashboardDir: string
    catalogReads: CatalogReads
    ops: OpsDeps
  },
) {
  const trust = addressTrust(deps.config)
  // normalize: false, so fields a schema does not know are refused rather than silently dropped.
  return new Elysia({ name: 'site', normalize: false })
    .onRequest(({ request }) => bodyTooLarge(request))
    .onTransform(({ body }) => refuseDeepBody(body))
    .onAfterHandle(({ set }) => {
      set.headers['referrer-policy'] = 'no-referrer'
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ServiceError) return siteError(error)
      if (code === 'VALIDATION') return siteError(validationError(error.type, error))
      if (code === 'NOT_FOUND')
        return siteError(
          new ServiceError(
            'not_found',
            `No endpoint at ${request.method} ${new URL(request.url).pathname}.`,
          ),
        )
      if (code === 'PARSE')
        return siteError(new ServiceError('invalid_request', 'Request body is not valid JSON.'))
      log.error('site request failed', { error })
      return siteError(new ServiceError('internal_error', 'The request failed unexpectedly.'))
    })
    .get('/health', () => ({ ok: true }))
    .use(opsRoutes(options.ops))
    .get('/api/v1/models', async ({ request, server }) => {
      const listing = await readCatalog(options.catalogReads, clientAddress(server, request, trust))
      return listing instanceof ServiceError ? siteError(listing) : listing
    })
    .get('/api/v1/models/*', async ({ request, params, server }) => {
      const listing = await readCatalog(options.catalogReads, clientAddress(server, request, trust))
      if (listing instanceof ServiceError) return siteError(listing)
      const id = modelIdFromPath(params['*'])
      return (
        listedModel(listing, id) ?? siteError(unknownListedModel(listing, id, '/api/v1/models'))
      )
    })
    .use(operatorRoutes(deps, options.operatorToken))
    .use(stripeWebhookRoute(deps))
    .use(adminRoutes(deps))
    .use(emailConfirmPage(deps))
    .get('/*', ({ params }) => dashboardFile(options.dashboardDir, params['*']))
}

/**
 * The dashboard page's headers. It shows secrets (new keys, the dashboard link), so it runs only its own
 * scripts and workers, talks only to its own origin and is never framed. Inline styles stay allowed:
 * Solid's templates and the charts set style attributes.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
}

/**
 * Paths of the servers' APIs, never the dashboard's: an unknown one (a mistyped operator path, the model
 * API asked on the site server) is a JSON 404, not the dashboard page with 200.
 */
const API_PATH = /^\/*(operator|admin|api|v1|webhooks)(\/|$)/

/** A built dashboard file, or index.html for client-side routes (so a hard refresh of any page works). */
export async function dashboardFile(dir: string, path: string): Promise<Response> {
  if (API_PATH.test(path))
    return siteError(
      new ServiceError('not_found', `No endpoint at GET /${path.replace(/^\/+/, '')}.`),
    )
  const parts = path.split('/').filter(Boolean)
  const headers = { 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' }
  // Never a path outside the build, nor its hidden files (the build manifest under .vite/).
  if (parts.length > 0 && !parts.some((part) => part.startsWith('.'))) {
    const safe = parts.join('/')
    const file = Bun.file(join(dir, safe))
    // Built assets carry a content hash in their names: they never change, so browsers may keep them.
    const cache = safe.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache'
    if (await file.exists())
      return new Response(file, { headers: { ...headers, 'cache-control': cache } })
  }
  const index = Bun.file(join(dir, 'index.html'))
  // The page names the current build's assets: always revalidated.
  if (await index.exists()) return new Response(index, { headers: { ...headers, ...PAGE_HEADERS } })
  return new Response('The dashboard is not built: run `bun run build`.\n', {
    status: 503,
    headers,
  })
}
