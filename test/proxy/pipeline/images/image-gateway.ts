/**
 * A test gateway with image models: the harness's gateway, whose catalog gets image models routed to
 * the fake provider, to a provider without a key, and to a provider that refuses connections.
 */
import {
  type CatalogProblem,
  problemLines,
} from '../../../../proxy/core/catalog/catalog-problems.ts'
import { buildImageModels } from '../../../../proxy/core/catalog/image-models.ts'
import type { CatalogImageModel } from '../../../../proxy/core/catalog/catalog-schema.ts'
import {
  startTestGateway,
  type TestGatewayOptions,
  type TestGateway,
} from '../../../helpers/gateway.ts'

/** USD per image: medium 1024x1024 costs 0.042 (42,000,000 nano). */
const prices = {
  '1024x1024/low': 0.011,
  '1024x1024/medium': 0.042,
  '1024x1024/high': 0.167,
  '1536x1024/medium': 0.063,
}
export const MEDIUM_NANO = 42_000_000

const imageModel = (id: string, routes: CatalogImageModel['routes']): CatalogImageModel => ({
  id,
  routes,
  prices,
  defaultSize: '1024x1024',
  defaultQuality: 'medium',
})

export const imageModels: CatalogImageModel[] = [
  imageModel('test/image', [{ provider: 'fake', model: 'fake-image' }]),
  imageModel('test/image-usage', [{ provider: 'fake', model: 'fake-image?usage=1' }]),
  imageModel('test/image-unkeyed', [{ provider: 'unkeyed', model: 'fake-image' }]),
  imageModel('test/image-refused', [{ provider: 'closed', model: 'fake-image' }]),
  imageModel('test/image-fallback', [
    { provider: 'closed', model: 'fake-image' },
    { provider: 'fake', model: 'fake-image' },
  ]),
]

export type ImageGateway = TestGateway & {
  /** POST /v1/images/generations through the API server's handler. */
  images(key: string | undefined, body: unknown): Promise<Response>
  /** GET /v1/images/status?request_id=… through the API server's handler. */
  status(key: string, requestId: string | null): Promise<Response>
  /** Requests the fake provider received at its Images API. */
  imageCalls(): number
}

export async function startImageGateway(
  options: TestGatewayOptions & { costDeadlineMs?: number },
): Promise<ImageGateway> {
  const gw = await startTestGateway(options)
  const { catalog, limits } = gw.app.gateway
  catalog.providers.set('closed', {
    id: 'closed',
    style: 'openai',
    baseUrl: `http://127.0.0.1:${await closedPort()}/v1`,
    apiKeyEnv: 'CLOSED_KEY',
    apiKey: 'sk-closed',
    available: true,
    builtin: undefined,
  })
  const problems: CatalogProblem[] = []
  for (const [id, model] of buildImageModels(imageModels, catalog.providers, problems))
    catalog.images.set(id, model)
  if (problems.length > 0) throw new Error(problemLines(problems).join('\n'))
  if (options.costDeadlineMs) limits.imageCostDeadlineMs = options.costDeadlineMs
  const call = (method: string, path: string, key: string | undefined, body?: unknown) =>
    gw.app.api.handle(
      new Request(`http://gateway.test${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        body:
          body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    )
  return Object.assign(gw, {
    images: (key: string | undefined, body: unknown) =>
      call('POST', '/v1/images/generations', key, body),
    status: (key: string, requestId: string | null) =>
      call(
        'GET',
        `/v1/images/status${requestId === null ? '' : `?request_id=${encodeURIComponent(requestId)}`}`,
        key,
      ),
    imageCalls: () =>
      gw.upstream.requests.filter((request) => request.path.endsWith('/images/generations')).length,
  })
}

/** A local port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = server.port!
  await server.stop(true)
  return port
}
