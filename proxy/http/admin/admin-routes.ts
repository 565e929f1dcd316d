/**
 * The admin API (`/admin/v1` on the site server), what the dashboard calls: session-authenticated, each
 * write checked for its origin, CORS only for the configured dashboard origins, and described as OpenAPI
 * (`/admin/v1/openapi/json`, where `/admin/v1/openapi` leads) from the TypeBox schemas in
 * `shared/schemas/admin/`.
 * Every object route checks that the object belongs to the session's account (another account's → 404).
 */
import { cors } from '@elysiajs/cors'
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import type { AdminDeps } from './admin-deps.ts'
import { checkOrigin } from './csrf.ts'
import { sessionRoutes } from './session-routes.ts'
import { setupRoutes } from './setup-routes.ts'
import { linkRoutes } from './link-routes.ts'
import { emailRoutes } from './email-routes.ts'
import { walletRoutes } from './wallet-routes.ts'
import { teamRoutes } from './team-routes.ts'
import { keyRoutes } from './key-routes.ts'
import { policyRoutes } from './policy-routes.ts'
import { billingRoutes } from './billing-routes.ts'
import { usageRoutes } from './usage-routes.ts'
import { playgroundRoutes } from './playground-routes.ts'
import { alertRoutes } from './alert-routes.ts'
import { supportRoutes } from './support-routes.ts'

export function adminRoutes(deps: AdminDeps) {
  const origins = allowedOrigins(deps)
  return new Elysia({ prefix: '/admin/v1', normalize: false })
    .use(
      cors({
        origin: [...origins],
        credentials: true,
        allowedHeaders: ['content-type'],
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      }),
    )
    .use(
      openapi({
        path: '/openapi',
        // No reader page: it runs a CDN's script, which must not run on the site's origin (the origin of
        // the session cookie and of the pages that show new keys). The document is at /openapi/json.
        provider: null,
        // The site's other routes (the operator API, health, the SPA) are not what the dashboard calls.
        exclude: { paths: [/^(?!\/admin\/v1\/)/] },
        documentation: {
          info: {
            title: 'Model Gateway admin API',
            version: '1',
            description: 'What the dashboard calls. Authenticated by the session cookie.',
          },
        },
      }),
    )
    .get('/openapi', ({ redirect }) => redirect('/admin/v1/openapi/json', 308), {
      detail: { hide: true },
    })
    .onBeforeHandle(({ request, set }) => {
      // An account's data is never kept by a browser: Back after a sign-out must not show it again.
      set.headers['cache-control'] = 'no-store'
      const refused = checkOrigin(request, origins)
      if (refused) throw refused
    })
    .use(sessionRoutes(deps))
    .use(setupRoutes(deps))
    .use(linkRoutes(deps))
    .use(emailRoutes(deps))
    .use(walletRoutes(deps))
    .use(teamRoutes(deps))
    .use(keyRoutes(deps))
    .use(policyRoutes(deps))
    .use(billingRoutes(deps))
    .use(usageRoutes(deps))
    .use(playgroundRoutes(deps))
    .use(alertRoutes(deps))
    .use(supportRoutes(deps))
}

/** The site's public origin and the configured dashboard origins. */
function allowedOrigins(deps: AdminDeps): Set<string> {
  const origins = new Set(
    deps.config.DASHBOARD_ORIGINS.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
  )
  if (deps.config.PUBLIC_SITE_URL) origins.add(new URL(deps.config.PUBLIC_SITE_URL).origin)
  return origins
}
