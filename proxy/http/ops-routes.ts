/**
 * The operations endpoints, mounted on both servers: GET /healthz (the process is up), GET /readyz (it can
 * serve: stores reachable, not draining) and GET /metrics (Prometheus text, behind METRICS_TOKEN when set).
 */
import { Elysia } from 'elysia'
import { ServiceError } from '../../shared/errors.ts'
import { digestsEqual } from '../core/api-key.ts'
import { siteError } from '../pipeline/respond.ts'
import { metricsContentType, metricsText } from '../core/metrics.ts'
import { checkReadiness, type ReadinessDeps } from '../ops/readiness.ts'

export type OpsDeps = {
  readiness: ReadinessDeps
  /** Bearer token for /metrics; empty: open. */
  metricsToken: string
}

const noStore = { 'cache-control': 'no-store' }

export function opsRoutes(deps: OpsDeps) {
  const expected = sha256(`Bearer ${deps.metricsToken}`)
  return new Elysia()
    .get('/healthz', () => Response.json({ status: 'ok' }, { headers: noStore }))
    .get('/readyz', async () => {
      const { ready, checks } = await checkReadiness(deps.readiness)
      // Probe answers, not errors: 503 is what load balancers read as "send nothing here".
      return Response.json(
        { status: ready ? 'ready' : 'unready', checks },
        { status: ready ? 200 : 503, headers: noStore },
      )
    })
    .get('/metrics', async ({ request }) => {
      if (deps.metricsToken) {
        // Digests of equal length, compared in constant time: the token's length does not leak either.
        if (!digestsEqual(sha256(request.headers.get('authorization') ?? ''), expected))
          return siteError(
            new ServiceError(
              'unauthorized',
              'Metrics token required: Authorization: Bearer <METRICS_TOKEN>.',
            ),
          )
      }
      return new Response(await metricsText(), {
        headers: { 'content-type': metricsContentType, ...noStore },
      })
    })
}

function sha256(text: string): Uint8Array {
  return new Bun.CryptoHasher('sha256').update(text).digest() as Uint8Array
}
