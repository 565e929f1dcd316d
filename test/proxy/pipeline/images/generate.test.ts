// Image generation and its money: what each provider outcome charges, holds and records, on every
// admission store. The price is the catalog's per image (0.042 USD at 1024x1024/medium) times n.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runMaintenance } from '../../../../proxy/ops/maintenance.ts'
import { settledAccount, sumOf } from '../../../helpers/ledger.ts'
import { describeWith } from '../../../helpers/services.ts'
import { storeSetups } from '../../../helpers/setups.ts'
import { MEDIUM_NANO, startImageGateway, type ImageGateway } from './image-gateway.ts'

const COST_DEADLINE_MS = 1_500

type Status = {
  status: string
  cost_usd: string
  hold_usd: string
  images: number
  images_returned: number | null
  error_code: string | null
  resolved_at: string | null
}

for (const { store, database, needs } of storeSetups) {
  describeWith(
    [...needs],
    `image generation with the ${store} admission store on ${database} Postgres`,
    () => {
      let gw: ImageGateway
      beforeAll(async () => {
        gw = await startImageGateway({
          store,
          database,
          env: { UPSTREAM_TIMEOUT_MS: '400' },
          costDeadlineMs: COST_DEADLINE_MS,
        })
      })
      afterAll(() => gw.close())

      const customer = async (usd = '10') => {
        const accountId = await gw.account(usd)
        return { accountId, key: (await gw.key(accountId)).key }
      }
      const statusOf = async (key: string, requestId: string) =>
        (await (await gw.status(key, requestId)).json()) as Status
      /** The status once the request's outcome is written (it follows the settle by a moment). */
      const resolvedStatus = async (key: string, requestId: string) => {
        const until = Date.now() + 5_000
        for (;;) {
          const status = await statusOf(key, requestId)
          if (status.status !== 'pending' || Date.now() > until) return status
          await Bun.sleep(20)
        }
      }
      const maintenanceDeps = () => ({
        sql: gw.app.gateway.sql,
        store: gw.app.gateway.store,
        inflight: gw.app.gateway.inflight,
      })
      const balanced = async (accountId: string) => {
        const { snapshot, ledger } = await settledAccount(gw, accountId)
        expect(snapshot).toMatchObject({ heldNano: 0, inFlight: 0 })
        expect(snapshot.balanceNano).toBe(sumOf(ledger))
        return { snapshot, ledger }
      }

      test('a generation charges the price per image times n exactly, and says so in the body and headers', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image-usage',
          prompt: 'a lighthouse at dusk',
          n: 2,
        })
        expect(response.status).toBe(200)
        const body = (await response.json()) as {
          created: number
          data: { url: string }[]
          usage: { cost: number; output_tokens: number }
        }
        expect(body.data).toHaveLength(2)
        expect(body.data[0]!.url).toStartWith('https://images.fake.test/')
        expect(body.usage.cost).toBe(0.084)
        expect(body.usage.output_tokens).toBe(544)
        expect(response.headers.get('x-service-cost-usd')).toBe('0.084')
        expect(response.headers.get('x-service-balance-usd')).toBe('9.916')
        expect(response.headers.get('x-service-model')).toBe('test/image-usage')
        expect(response.headers.get('x-service-provider')).toBe('fake')
        const requestId = response.headers.get('x-request-id')!
        const { snapshot, ledger } = await balanced(accountId)
        expect(
          ledger
            .filter((row) => row.request_id === requestId)
            .map((row) => [row.kind, row.amount_nano]),
        ).toEqual([['charge', -2 * MEDIUM_NANO]])
        expect(snapshot.balanceNano).toBe(10_000_000_000 - 2 * MEDIUM_NANO)
        expect(await resolvedStatus(key, requestId)).toMatchObject({
          status: 'charged',
          cost_usd: '0.084',
          hold_usd: '0.084',
          images: 2,
          images_returned: 2,
        })
      })

      test('the provider receives the priced size, quality and n, the upstream model name and its own key', async () => {
        const { key } = await customer()
        const before = gw.upstream.requests.length
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a fox',
          size: '1536x1024',
          response_format: 'b64_json',
          user: 'u-1',
        })
        expect(response.status).toBe(200)
        const sent = gw.upstream.requests
          .slice(before)
          .find((request) => request.path === '/v1/images/generations')!
        expect(sent.body).toEqual({
          model: 'fake-image',
          prompt: 'a fox',
          n: 1,
          size: '1536x1024',
          quality: 'medium',
          response_format: 'b64_json',
          user: 'u-1',
        })
        expect(sent.headers.authorization).toBe('Bearer sk-fake-provider')
        const body = (await response.json()) as { data: { b64_json: string }[]; usage?: unknown }
        expect(atob(body.data[0]!.b64_json)).toBe('fake image 0')
        expect(body.usage).toBeUndefined()
        expect(response.headers.get('x-service-cost-usd')).toBe('0.063')
      })

      test('fewer images than asked charge only the images returned', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'three cats [[fewer=1]]',
          n: 3,
        })
        expect(response.status).toBe(200)
        expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(1)
        expect(response.headers.get('x-service-cost-usd')).toBe('0.042')
        const requestId = response.headers.get('x-request-id')!
        const { ledger } = await balanced(accountId)
        expect(
          ledger.filter((row) => row.request_id === requestId).map((row) => row.amount_nano),
        ).toEqual([-MEDIUM_NANO])
        expect(await resolvedStatus(key, requestId)).toMatchObject({
          status: 'charged',
          cost_usd: '0.042',
          hold_usd: '0.126',
          images: 3,
          images_returned: 1,
        })
      })

      test('more images than asked: only those asked for, and paid, are delivered', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'two cats [[fewer=4]]',
          n: 2,
        })
        expect(response.status).toBe(200)
        expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(2)
        expect(response.headers.get('x-service-cost-usd')).toBe('0.084')
        const requestId = response.headers.get('x-request-id')!
        await balanced(accountId)
        expect(await resolvedStatus(key, requestId)).toMatchObject({
          status: 'charged',
          cost_usd: '0.084',
          images: 2,
          images_returned: 2,
        })
      })

      /** A refusal after the provider answered: its status and code, nothing charged, the request failed. */
      const failedUncharged = async (
        accountId: string,
        key: string,
        response: Response,
        status: number,
        code: string,
      ) => {
        expect(response.status).toBe(status)
        expect(response.headers.get('x-service-error-code')).toBe(code)
        const requestId = response.headers.get('x-request-id')!
        const error = ((await response.json()) as { error: { code: string; message: string } })
          .error
        expect(error.code).toBe(code)
        const { snapshot, ledger } = await balanced(accountId)
        expect(ledger.filter((row) => row.request_id === requestId)).toEqual([])
        expect(snapshot.balanceNano).toBe(10_000_000_000)
        expect(await resolvedStatus(key, requestId)).toMatchObject({
          status: 'failed',
          cost_usd: '0',
          error_code: code,
        })
        return { requestId, message: error.message }
      }

      test('an upstream 500 is 502 image_request_failed: nothing charged, the hold released, the request failed', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a boat [[status=500]]',
        })
        const { requestId, message } = await failedUncharged(
          accountId,
          key,
          response,
          502,
          'image_request_failed',
        )
        expect(message).toContain(`/v1/images/status?request_id=${requestId}`)
      })

      test("a provider's rate limit is 503 upstream_rate_limited with its wait: nothing generated or charged", async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a kite [[status=429&retryAfter=7]]',
        })
        expect(response.headers.get('retry-after')).toBe('7')
        const { message } = await failedUncharged(
          accountId,
          key,
          response,
          503,
          'upstream_rate_limited',
        )
        expect(message).toContain('No image was generated; nothing was charged.')
      })

      test("a provider's content-policy refusal is 400 provider_policy_rejected, nothing charged", async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'something [[status=400&code=content_policy_violation]]',
        })
        expect(response.status).toBe(400)
        expect(response.headers.get('x-service-error-code')).toBe('provider_policy_rejected')
        const requestId = response.headers.get('x-request-id')!
        const { ledger } = await balanced(accountId)
        expect(ledger.filter((row) => row.request_id === requestId)).toEqual([])
        expect(await resolvedStatus(key, requestId)).toMatchObject({
          status: 'failed',
          error_code: 'provider_policy_rejected',
        })
      })

      test('a provider that does not answer in time: 502, the hold stays until the cost deadline, then the request is released', async () => {
        const { accountId, key } = await customer()
        const calls = gw.imageCalls()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a storm [[hang=1]]',
          n: 2,
        })
        expect(response.status).toBe(502)
        expect(response.headers.get('x-service-error-code')).toBe('image_request_failed')
        expect(response.headers.get('x-service-balance-usd')).toBe('9.916')
        const message = ((await response.json()) as { error: { message: string } }).error.message
        expect(message).toContain('did not answer in time')
        expect(message).toContain('$0.084 stays held until')
        expect(gw.imageCalls()).toBe(calls + 1)
        const requestId = response.headers.get('x-request-id')!

        // The sweep before the deadline leaves it alone; the hold is not extended either.
        await runMaintenance(maintenanceDeps())
        expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
          heldNano: 2 * MEDIUM_NANO,
          inFlight: 1,
        })
        expect(await statusOf(key, requestId)).toMatchObject({
          status: 'pending',
          hold_usd: '0.084',
          cost_usd: '0',
          resolved_at: null,
        })

        // After it, the sweep (one sweeper at a time: with Redis, a short lock) expires the hold and releases the request.
        await Bun.sleep(COST_DEADLINE_MS + 100)
        let status = await statusOf(key, requestId)
        for (
          const until = Date.now() + 10_000;
          status.status === 'pending' && Date.now() < until;
          await Bun.sleep(100)
        ) {
          await runMaintenance(maintenanceDeps())
          status = await statusOf(key, requestId)
        }
        const { snapshot, ledger } = await balanced(accountId)
        expect(snapshot.balanceNano).toBe(10_000_000_000)
        expect(ledger.filter((row) => row.request_id === requestId)).toEqual([])
        expect(status).toMatchObject({ status: 'released', cost_usd: '0' })
        expect(status.resolved_at).not.toBeNull()
        expect(gw.imageCalls()).toBe(calls + 1)
      })

      test('a connection dropped after sending keeps the hold too: the images may exist', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a bridge [[drop=1]]',
        })
        expect(response.status).toBe(502)
        expect(response.headers.get('x-service-error-code')).toBe('image_request_failed')
        expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
          heldNano: MEDIUM_NANO,
        })
        expect(await statusOf(key, response.headers.get('x-request-id')!)).toMatchObject({
          status: 'pending',
        })
      })

      test('an unreadable success body keeps the hold: the provider may have billed it', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, {
          model: 'test/image',
          prompt: 'a tree [[garbage=1]]',
        })
        expect(response.status).toBe(502)
        expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
          'could not be read',
        )
        expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
          heldNano: MEDIUM_NANO,
        })
      })

      test('a refused connection moves on to the next route; with none left, 503 images_unavailable and the hold released', async () => {
        const { accountId, key } = await customer()
        const served = await gw.images(key, { model: 'test/image-fallback', prompt: 'a kite' })
        expect(served.status).toBe(200)
        expect(served.headers.get('x-service-provider')).toBe('fake')
        const refused = await gw.images(key, { model: 'test/image-refused', prompt: 'a kite' })
        expect(refused.status).toBe(503)
        expect(refused.headers.get('x-service-error-code')).toBe('images_unavailable')
        const { snapshot } = await balanced(accountId)
        expect(snapshot.balanceNano).toBe(10_000_000_000 - MEDIUM_NANO)
        expect(await resolvedStatus(key, refused.headers.get('x-request-id')!)).toMatchObject({
          status: 'failed',
          error_code: 'images_unavailable',
        })
      })

      test('no provider configured for the model: 503 images_unavailable, nothing held or recorded', async () => {
        const { accountId, key } = await customer()
        const response = await gw.images(key, { model: 'test/image-unkeyed', prompt: 'a kite' })
        expect(response.status).toBe(503)
        expect(response.headers.get('x-service-error-code')).toBe('images_unavailable')
        expect(await gw.app.gateway.store.snapshot(accountId)).toMatchObject({
          heldNano: 0,
          inFlight: 0,
        })
        expect((await gw.status(key, response.headers.get('x-request-id')!)).status).toBe(404)
      })

      test('a balance below the price is 402 insufficient_credits, and nothing is sent', async () => {
        const { accountId, key } = await customer('0.05')
        const calls = gw.imageCalls()
        const response = await gw.images(key, { model: 'test/image', prompt: 'two moons', n: 2 })
        expect(response.status).toBe(402)
        expect(response.headers.get('x-service-error-code')).toBe('insufficient_credits')
        expect(response.headers.get('x-service-balance-usd')).toBe('0.05')
        expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
          '$0.084',
        )
        expect(gw.imageCalls()).toBe(calls)
        expect((await balanced(accountId)).snapshot.balanceNano).toBe(50_000_000)
      })

      test('the request log records image requests with their cost, and failed ones with the status and code the client got', async () => {
        const { key } = await customer()
        const logged = async (prompt: string) => {
          const response = await gw.images(key, { model: 'test/image', prompt })
          const requestId = response.headers.get('x-request-id')!
          await resolvedStatus(key, requestId)
          await gw.app.gateway.writer.drain()
          const [row] = await gw.app.gateway.sql<
            {
              api_style: string
              model: string
              provider: string | null
              status: number
              error_code: string | null
              charged_nano: number
            }[]
          >`
          SELECT api_style, model, provider, status, error_code, charged_nano
          FROM request_logs WHERE request_id = ${requestId}`
          expect(row?.status).toBe(response.status)
          return row
        }
        expect(await logged('a map')).toMatchObject({
          api_style: 'images',
          model: 'test/image',
          provider: 'fake',
          status: 200,
          error_code: null,
          charged_nano: MEDIUM_NANO,
        })
        expect(await logged('a map [[status=500]]')).toMatchObject({
          status: 502,
          error_code: 'image_request_failed',
          charged_nano: 0,
        })
        expect(await logged('a map [[status=400&code=content_policy_violation]]')).toMatchObject({
          status: 400,
          error_code: 'provider_policy_rejected',
        })
        expect(await logged('a map [[garbage=1]]')).toMatchObject({
          provider: 'fake',
          status: 502,
          error_code: 'image_request_failed',
          charged_nano: 0,
        })
      })
    },
  )
}
