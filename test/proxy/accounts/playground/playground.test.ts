// The dashboard playground: N free trial messages then 402 trial_exhausted, one free message at a time
// (409 request_in_progress), never a paid request on a free refusal, and paid chat charged to the balance.
import { afterAll, beforeAll, beforeEach, expect, test } from 'bun:test'
import type { PlaygroundAnswer, TrialStatus } from '../../../../shared/schemas/admin/playground.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

const free = { inputPerMTok: 0, outputPerMTok: 0 }
const models = [
  testModel('test/paid', 'paid?tokens=4'),
  testModel('test/free', 'free?tokens=3', { pricing: free, free: true }),
  testModel('test/free-slow', 'free-slow?tokens=3&delay=300', { pricing: free, free: true }),
  testModel('test/free-stream', 'free-stream?tokens=6&chunkDelay=20', {
    pricing: free,
    free: true,
  }),
  testModel('test/free-off', 'free-off', {
    pricing: free,
    free: true,
    routes: [{ provider: 'unkeyed', model: 'free-off' }],
  }),
  testModel('test/free-broken', 'free-broken?status=500', { pricing: free, free: true }),
]
const catalog = {
  auto: [
    { id: 'service/auto', candidates: ['test/paid'] },
    { id: 'service/auto:free', free: true, candidates: ['test/free'] },
    { id: 'service/auto:free-off', free: true, candidates: ['test/free-off'] },
  ],
}
const hello = [{ role: 'user', content: 'hello' }]

type ErrorBody = { error: { code: string; message: string; param: string | null } }

for (const store of ['memory', 'redis'] as const) {
  describeWith(
    store === 'redis' ? ['postgres', 'redis'] : 'postgres',
    `playground chat (${store} store)`,
    () => {
      let gw: TestGateway
      beforeAll(async () => {
        gw = await startTestGateway({
          store,
          database: 'postgres',
          models,
          catalog,
          env: { FREE_CHAT_MESSAGES: '3' },
        })
      })
      afterAll(() => gw.close())
      beforeEach(() => {
        gw.app.admin.playground.freeModel = 'service/auto:free'
      })

      const chat = (cookie: string, body: Record<string, unknown>) =>
        admin(gw, 'POST', '/admin/v1/playground/chat', { cookie, body })
      const paidRequests = () =>
        gw.upstream.requests.filter((request) => String(request.body.model).startsWith('paid'))
          .length

      test('free chat: the free messages, then 402 trial_exhausted; never a paid request, nothing charged', async () => {
        const accountId = await gw.account('0')
        const { cookie } = await sessionFor(gw, accountId)
        const paidBefore = paidRequests()
        for (let i = 1; i <= 3; i++) {
          const response = await chat(cookie, { messages: hello })
          expect(response.status).toBe(200)
          const answer = (await response.json()) as PlaygroundAnswer
          expect(answer).toMatchObject({
            paid: false,
            model: 'test/free',
            costUsd: '0',
            trial: { limit: 3, used: i, remaining: 3 - i, model: 'service/auto:free' },
          })
          expect(
            (answer.completion as { choices: { message: { content: string } }[] }).choices[0]!
              .message.content,
          ).toContain('w0')
        }
        const exhausted = await chat(cookie, { messages: hello })
        expect(exhausted.status).toBe(402)
        const body = (await exhausted.json()) as ErrorBody
        expect(body.error.code).toBe('trial_exhausted')
        expect(body.error.message).toContain('Add credits and choose paid chat')
        expect(paidRequests()).toBe(paidBefore)
        const trial = (await (
          await admin(gw, 'GET', '/admin/v1/playground/trial', { cookie })
        ).json()) as TrialStatus
        expect(trial).toEqual({
          limit: 3,
          used: 3,
          remaining: 0,
          model: 'service/auto:free',
          available: true,
        })
        expect((await gw.app.operator.store.snapshot(accountId)).balanceNano).toBe(0)
      })

      test('a second free message while the first runs is 409 request_in_progress and uses no message', async () => {
        const accountId = await gw.account('0')
        const { cookie } = await sessionFor(gw, accountId)
        const first = chat(cookie, { model: 'test/free-slow', messages: hello })
        await Bun.sleep(100)
        const second = await chat(cookie, { messages: hello })
        expect(second.status).toBe(409)
        expect(((await second.json()) as ErrorBody).error.code).toBe('request_in_progress')
        expect((await first).status).toBe(200)
        // The first has ended and settled: the next one may go.
        const third = await chat(cookie, { messages: hello })
        expect(third.status).toBe(200)
        expect(((await third.json()) as PlaygroundAnswer).trial.used).toBe(2)
        // Other accounts are not held up.
        const other = await sessionFor(gw, await gw.account('0'))
        const [a, b] = await Promise.all([
          chat(cookie, { model: 'test/free-slow', messages: hello }),
          chat(other.cookie, { model: 'test/free-slow', messages: hello }),
        ])
        expect([a.status, b.status]).toEqual([200, 200])
      })

      test('free chat that cannot be served says so, makes no paid request and gives the message back', async () => {
        const accountId = await gw.account('5')
        const { cookie } = await sessionFor(gw, accountId)
        const sent = gw.upstream.requests.length
        gw.app.admin.playground.freeModel = 'service/auto:free-off'
        const off = await chat(cookie, { messages: hello })
        expect(off.status).toBe(503)
        const body = (await off.json()) as ErrorBody
        expect(body.error.code).toBe('auto_unresolvable')
        expect(body.error.message).toContain('Free chat is temporarily unavailable')
        expect(body.error.message).toContain('No paid request was made')
        expect(gw.upstream.requests.length).toBe(sent)

        // A free model that fails upstream: the refusal, and still nothing paid.
        const paidBefore = paidRequests()
        const broken = await chat(cookie, { model: 'test/free-broken', messages: hello })
        expect(broken.status).toBe(503)
        expect(((await broken.json()) as ErrorBody).error.message).toContain(
          'Free chat is temporarily unavailable',
        )
        expect(broken.headers.get('x-request-id')).toStartWith('req_')
        expect(paidRequests()).toBe(paidBefore)

        // A paid model configured as the free chat model is refused before anything is sent.
        gw.app.admin.playground.freeModel = 'test/paid'
        const misconfigured = await chat(cookie, { messages: hello })
        expect(misconfigured.status).toBe(503)
        expect(((await misconfigured.json()) as ErrorBody).error.message).toContain(
          'No paid request was made',
        )
        expect(paidRequests()).toBe(paidBefore)

        const trial = (await (
          await admin(gw, 'GET', '/admin/v1/playground/trial', { cookie })
        ).json()) as TrialStatus
        expect(trial.used).toBe(0)
        // The trial says so before anyone sends a message.
        expect(trial.available).toBe(false)
        expect((await gw.app.operator.store.snapshot(accountId)).balanceNano).toBe(5_000_000_000)
      })

      test('free chat naming a paid model is refused by field; the user must choose paid chat', async () => {
        const { cookie } = await sessionFor(gw, await gw.account('5'))
        const paidBefore = paidRequests()
        const response = await chat(cookie, { model: 'test/paid', messages: hello })
        expect(response.status).toBe(400)
        const body = (await response.json()) as ErrorBody
        expect(body.error.param).toBe('model')
        expect(body.error.message).toContain('choose paid chat')
        expect(paidRequests()).toBe(paidBefore)
      })

      test('paid chat goes through the gateway as the playground key and is charged to the balance', async () => {
        const accountId = await gw.account('1')
        const { cookie } = await sessionFor(gw, accountId, 'member')
        const response = await chat(cookie, { paid: true, model: 'test/paid', messages: hello })
        expect(response.status).toBe(200)
        const answer = (await response.json()) as PlaygroundAnswer
        expect(answer).toMatchObject({ paid: true, model: 'test/paid', trial: { used: 0 } })
        expect(Number(answer.costUsd)).toBeGreaterThan(0)
        const costNano = Math.round(Number(answer.costUsd) * 1e9)
        // The settle goes out after the answer: wait for the hold to end, then for the rows to be written.
        await gw.app.gateway.inflight.ended(answer.requestId)
        expect((await gw.app.operator.store.snapshot(accountId)).balanceNano).toBe(
          1_000_000_000 - costNano,
        )
        await gw.app.gateway.writer.drain()
        const [row] = await gw.app.operator.sql<
          { name: string; amount_nano: number; playground: boolean }[]
        >`
        SELECT k.name, l.amount_nano, a.playground_key_id = k.id AS playground
        FROM ledger l JOIN api_keys k ON k.id = l.key_id JOIN accounts a ON a.id = l.account_id
        WHERE l.request_id = ${answer.requestId} AND l.kind = 'charge'`
        expect(row).toEqual({ name: 'Playground', amount_nano: -costNano, playground: true })
        expect(
          await gw.app.operator
            .sql`SELECT 1 FROM request_logs WHERE request_id = ${answer.requestId} AND account_id = ${accountId}`,
        ).toHaveLength(1)
        // The same key serves the next message.
        expect(
          (await chat(cookie, { paid: true, model: 'test/paid', messages: hello })).status,
        ).toBe(200)
        expect(
          await gw.app.operator.sql`SELECT 1 FROM api_keys WHERE account_id = ${accountId}`,
        ).toHaveLength(1)
      })

      test('paid chat needs a model and the balance; its refusals are the gateway’s', async () => {
        const accountId = await gw.account('0')
        const { cookie } = await sessionFor(gw, accountId)
        const noModel = await chat(cookie, { paid: true, messages: hello })
        expect(noModel.status).toBe(400)
        expect(((await noModel.json()) as ErrorBody).error.param).toBe('model')
        const broke = await chat(cookie, { paid: true, model: 'test/paid', messages: hello })
        expect(broke.status).toBe(402)
        expect(((await broke.json()) as ErrorBody).error.code).toBe('insufficient_credits')
        expect(broke.headers.get('x-request-id')).toStartWith('req_')
        const unknown = await chat(cookie, { paid: true, model: 'test/nope', messages: hello })
        expect(unknown.status).toBe(404)
        expect(((await unknown.json()) as ErrorBody).error.code).toBe('unknown_model')
      })

      test('a revoked playground key is replaced on the next message', async () => {
        const accountId = await gw.account('1')
        const { cookie } = await sessionFor(gw, accountId)
        expect(
          (await chat(cookie, { paid: true, model: 'test/paid', messages: hello })).status,
        ).toBe(200)
        const playgroundKeyId = async () =>
          (
            await gw.app.operator.sql<
              { id: string }[]
            >`SELECT playground_key_id AS id FROM accounts WHERE id = ${accountId}`
          )[0]!.id
        const first = await playgroundKeyId()
        const [revoked] = await gw.app.operator.sql<
          { prefix: string }[]
        >`UPDATE api_keys SET status = 'revoked' WHERE id = ${first} RETURNING prefix`
        await gw.app.operator.keys.invalidate({ prefix: revoked!.prefix })
        expect(
          (await chat(cookie, { paid: true, model: 'test/paid', messages: hello })).status,
        ).toBe(200)
        expect(await playgroundKeyId()).not.toBe(first)
      })

      test('streams: paid and free answers arrive as events; the free lock is released when the stream ends', async () => {
        const accountId = await gw.account('1')
        const { cookie } = await sessionFor(gw, accountId)
        const paid = await chat(cookie, {
          paid: true,
          model: 'test/paid',
          messages: hello,
          stream: true,
        })
        expect(paid.headers.get('content-type')).toContain('text/event-stream')
        const paidText = await paid.text()
        expect(paidText).toContain('"cost"')
        expect(paidText).toContain('data: [DONE]')
        const first = await chat(cookie, {
          model: 'test/free-stream',
          messages: hello,
          stream: true,
        })
        expect(first.status).toBe(200)
        expect((await chat(cookie, { messages: hello })).status).toBe(409)
        expect(await first.text()).toContain('data: [DONE]')
        expect((await chat(cookie, { messages: hello })).status).toBe(200)
      })

      test('suspended accounts cannot chat; signed-out browsers get 401; writes need the site origin', async () => {
        const accountId = await gw.account('1')
        const { cookie } = await sessionFor(gw, accountId, 'member')
        expect(
          (await admin(gw, 'POST', '/admin/v1/playground/chat', { body: { messages: hello } }))
            .status,
        ).toBe(401)
        expect(
          (
            await admin(gw, 'POST', '/admin/v1/playground/chat', {
              cookie,
              body: { messages: hello },
              origin: 'https://evil.test',
            })
          ).status,
        ).toBe(403)
        await gw.app.operator.sql`UPDATE accounts SET status = 'suspended' WHERE id = ${accountId}`
        const refused = await chat(cookie, { messages: hello })
        expect(refused.status).toBe(403)
        expect(((await refused.json()) as ErrorBody).error.code).toBe('account_suspended')
        expect((await admin(gw, 'GET', '/admin/v1/playground/trial', { cookie })).status).toBe(200)
      })

      if (store === 'redis') {
        test('the free chat lock holds across processes sharing Redis', async () => {
          const sibling = await startTestGateway({
            store,
            database: 'postgres',
            models,
            catalog,
            sibling: gw,
            env: { FREE_CHAT_MESSAGES: '3' },
          })
          try {
            const accountId = await gw.account('0')
            const { cookie } = await sessionFor(gw, accountId)
            const first = chat(cookie, { model: 'test/free-slow', messages: hello })
            await Bun.sleep(100)
            const second = await sibling.app.site.handle(
              new Request('http://site.test/admin/v1/playground/chat', {
                method: 'POST',
                headers: { cookie, origin: 'http://site.test', 'content-type': 'application/json' },
                body: JSON.stringify({ messages: hello }),
              }),
            )
            expect(second.status).toBe(409)
            expect((await first).status).toBe(200)
          } finally {
            await sibling.close()
          }
        })
      }

      test('the body is checked by field', async () => {
        const { cookie } = await sessionFor(gw, await gw.account('1'))
        for (const [body, param] of [
          [{ messages: [] }, 'messages'],
          [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
          [{ messages: hello, temperature: 1 }, 'temperature'],
        ] as const) {
          const response = await chat(cookie, body)
          expect(response.status).toBe(400)
          expect(((await response.json()) as ErrorBody).error.param).toStartWith(
            param.split('[')[0]!,
          )
        }
      })
    },
  )
}
