// The admin API's usage and activity: totals from the rollup by hour or day and by model or key, the
// request list in keyset pages (filtered by key, model, status and time), the last 24 hours by hour; each
// scoped to the session's account.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TransactionSql } from 'postgres'
import type { Activity, ActivitySummary, Usage } from '../../../../shared/schemas/admin/usage.ts'
import { admin, sessionFor } from '../../../helpers/admin.ts'
import { startTestGateway, testModel, type TestGateway } from '../../../helpers/gateway.ts'
import { describeWith } from '../../../helpers/services.ts'

const models = [testModel('test/cheap', 'fake?tokens=7'), testModel('test/other', 'fake?tokens=3')]

for (const database of ['postgres', 'embedded'] as const) {
  describeWith('postgres', `usage and activity routes (${database})`, () => {
    let gw: TestGateway
    let accountId: string
    let cookie: string
    let keys: { id: string; key: string }[]
    const requestIds: string[] = []

    beforeAll(async () => {
      gw = await startTestGateway({ store: 'memory', database, models })
      accountId = await gw.account('1')
      cookie = (await sessionFor(gw, accountId)).cookie
      keys = [
        await gw.key(accountId, { name: 'first' }),
        await gw.key(accountId, { name: 'second' }),
      ]
      const plan = [
        [0, 'test/cheap'],
        [0, 'test/cheap'],
        [1, 'test/other'],
        [1, 'test/cheap'],
        [0, 'test/missing'],
      ] as const
      for (const [index, model] of plan) {
        const response = await gw.chat(keys[index]!.key, {
          model,
          messages: [{ role: 'user', content: 'hello' }],
        })
        requestIds.push(response.headers.get('x-request-id')!)
        await response.arrayBuffer()
        await Bun.sleep(2)
      }
      // Another account's traffic must never show.
      const other = await gw.account('1')
      await (
        await gw.chat((await gw.key(other)).key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'x' }],
        })
      ).arrayBuffer()
      await gw.app.gateway.writer.drain()
    })
    afterAll(() => gw.close())

    const get = async <T>(path: string) => {
      const response = await admin(gw, 'GET', path, { cookie })
      expect(response.status).toBe(200)
      return (await response.json()) as T
    }

    test('usage by day totals every request of the account, money in nano and USD', async () => {
      const usage = await get<Usage>('/admin/v1/usage')
      expect(usage.granularity).toBe('day')
      expect(usage.groupBy).toBeNull()
      expect(usage.buckets).toHaveLength(1)
      expect(usage.totals.requests).toBe(5)
      expect(usage.totals.errors).toBe(1)
      expect(usage.totals.outputTokens).toBe(7 * 3 + 3)
      expect(usage.totals.chargedNano).toBeGreaterThan(0)
      expect(usage.totals.chargedUsd).toBe(String(usage.totals.chargedNano / 1e9))
      expect(usage.buckets[0]!.start.endsWith('T00:00:00.000Z')).toBe(true)
    })

    test('usage by hour and model, and by key with its name and prefix', async () => {
      const byModel = await get<Usage>('/admin/v1/usage?granularity=hour&groupBy=model')
      expect(byModel.buckets.map((bucket) => [bucket.model, bucket.requests])).toEqual([
        ['test/cheap', 3],
        ['test/missing', 1],
        ['test/other', 1],
      ])
      const byKey = await get<Usage>('/admin/v1/usage?granularity=hour&groupBy=key')
      const named = Object.fromEntries(
        byKey.buckets.map((bucket) => [bucket.key!.name, bucket.requests]),
      )
      expect(named).toEqual({ first: 3, second: 2 })
      expect(byKey.buckets.every((bucket) => bucket.key!.prefix.startsWith('svc-live-'))).toBe(true)
    })

    test('a period without traffic is empty; a bad period names its field', async () => {
      const empty = await get<Usage>(
        '/admin/v1/usage?from=2020-01-01T00:00:00Z&to=2020-01-10T00:00:00Z',
      )
      expect(empty.buckets).toEqual([])
      expect(empty.totals.requests).toBe(0)
      for (const [query, param] of [
        ['from=yesterday', 'from'],
        ['from=2020-01-10T00:00:00Z&to=2020-01-01T00:00:00Z', 'from'],
        ['granularity=hour&from=2020-01-01T00:00:00Z&to=2020-06-01T00:00:00Z', 'from'],
        ['granularity=week', 'granularity'],
        ['groupBy=provider', 'groupBy'],
      ]) {
        const response = await admin(gw, 'GET', `/admin/v1/usage?${query}`, { cookie })
        expect(response.status).toBe(400)
        expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param!)
      }
    })

    test('activity lists the requests newest first, in keyset pages that end', async () => {
      const seen: string[] = []
      let before: string | null = null
      let pages = 0
      do {
        const page: Activity = await get<Activity>(
          `/admin/v1/activity?limit=2${before ? `&before=${before}` : ''}`,
        )
        expect(page.items.length).toBeLessThanOrEqual(2)
        seen.push(...page.items.map((item) => item.requestId))
        before = page.nextBefore
        pages += 1
      } while (before)
      expect(pages).toBe(3)
      expect(seen).toEqual([...requestIds].reverse())
      const first = (await get<Activity>('/admin/v1/activity?limit=1')).items[0]!
      expect(first).toMatchObject({
        requestId: requestIds.at(-1),
        model: 'test/missing',
        servedModel: null,
        status: 404,
        errorCode: 'unknown_model',
        keyId: keys[0]!.id,
      })
      const served = (await get<Activity>('/admin/v1/activity')).items.find(
        (item) => item.model === 'test/other',
      )!
      expect(served).toMatchObject({
        servedModel: 'test/other',
        provider: 'fake',
        status: 200,
        outputTokens: 3,
        apiStyle: 'chat',
        stream: false,
      })
      expect(served.costUsd).toBe(String(served.costNano / 1e9))
    })

    test('a cursor that is not one, or a limit out of range, is refused by name', async () => {
      for (const [query, param] of [
        ['before=nonsense', 'before'],
        ['limit=0', 'limit'],
        ['limit=500', 'limit'],
      ]) {
        const response = await admin(gw, 'GET', `/admin/v1/activity?${query}`, { cookie })
        expect(response.status).toBe(400)
        expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param!)
      }
    })

    test('activity filters by key, model, status and time, each still in keyset pages', async () => {
      const ids = async (query: string) => {
        const seen: string[] = []
        let before: string | null = null
        do {
          const page: Activity = await get<Activity>(
            `/admin/v1/activity?limit=1&${query}${before ? `&before=${before}` : ''}`,
          )
          seen.push(...page.items.map((item) => item.requestId))
          before = page.nextBefore
        } while (before)
        return seen
      }
      const [r0, r1, r2, r3, r4] = requestIds as [string, string, string, string, string]
      expect(await ids(`keyId=${keys[1]!.id}`)).toEqual([r3, r2])
      // The model a request counts under in usage: the one that served, else the one asked for.
      expect(await ids('model=test/cheap')).toEqual([r3, r1, r0])
      expect(await ids('model=test/missing')).toEqual([r4])
      expect(await ids(`model=test/cheap&keyId=${keys[0]!.id}`)).toEqual([r1, r0])
      expect(await ids('status=error')).toEqual([r4])
      expect(await ids('status=404')).toEqual([r4])
      expect(await ids('status=ok')).toEqual([r3, r2, r1, r0])
      expect(await ids('status=200')).toEqual([r3, r2, r1, r0])
      expect(await ids('status=500')).toEqual([])
      const all = (await get<Activity>('/admin/v1/activity')).items
      const at = (id: string) => all.find((item) => item.requestId === id)!.time
      expect(await ids(`from=${at(r2)}`)).toEqual([r4, r3, r2])
      expect(await ids(`to=${at(r2)}`)).toEqual([r1, r0])
      expect(await ids(`from=${at(r1)}&to=${at(r3)}&status=ok`)).toEqual([r2, r1])
    })

    test("another account's key shows nothing; bad filters are refused by name", async () => {
      const stranger = await gw.key(await gw.account('1'))
      expect((await get<Activity>(`/admin/v1/activity?keyId=${stranger.id}`)).items).toEqual([])
      for (const [query, param] of [
        ['status=failed', 'status'],
        ['status=42', 'status'],
        ['from=later', 'from'],
        ['from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
        ['provider=fake', 'provider'],
      ]) {
        const response = await admin(gw, 'GET', `/admin/v1/activity?${query}`, { cookie })
        expect(response.status).toBe(400)
        expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param!)
      }
    })

    test('the summary has the last 24 hours by hour, this hour holding the traffic', async () => {
      const summary = await get<ActivitySummary>('/admin/v1/activity/summary')
      expect(summary.hours).toHaveLength(24)
      expect(summary.hours.at(-1)!.requests).toBe(5)
      expect(summary.hours.slice(0, -1).every((hour) => hour.requests === 0)).toBe(true)
      expect(summary.totals.requests).toBe(5)
      expect(Date.parse(summary.hours.at(-1)!.start) - Date.parse(summary.hours[0]!.start)).toBe(
        23 * 3_600_000,
      )
    })

    if (database === 'postgres') {
      test('the activity page is read through the account-and-time index, not a scan', async () => {
        const plan = await gw.app.operator.sql.begin(async (tx) => {
          // Few rows make a scan the cheapest plan; forbid it to see the plan the index gives.
          await tx`SET LOCAL enable_seqscan = off`
          return tx<{ 'QUERY PLAN': string }[]>`
            EXPLAIN SELECT request_id FROM request_logs WHERE account_id = ${accountId}
              AND started_at <= now() AND (started_at < now() OR request_id < 'x')
            ORDER BY started_at DESC, request_id DESC LIMIT 51`
        })
        const text = plan.map((row) => row['QUERY PLAN']).join('\n')
        expect(text).toContain('request_logs_account_time')
        expect(text).not.toContain('Seq Scan')
      })

      test('filtered pages read their own index: model and errors each have one, the key its key index', async () => {
        const explain = (query: (tx: TransactionSql) => Promise<{ 'QUERY PLAN': string }[]>) =>
          gw.app.operator.sql.begin(async (tx) => {
            await tx`SET LOCAL enable_seqscan = off`
            return (await query(tx)).map((row) => row['QUERY PLAN']).join('\n')
          })
        const byModel = await explain(
          (tx) => tx`
          EXPLAIN SELECT request_id FROM request_logs WHERE account_id = ${accountId} AND coalesce(served_model, model, '') = ${'test/cheap'}
          ORDER BY started_at DESC, request_id DESC LIMIT 51`,
        )
        expect(byModel).toContain('request_logs_account_model_time')
        const errors = await explain(
          (tx) => tx`
          EXPLAIN SELECT request_id FROM request_logs WHERE account_id = ${accountId} AND status >= 400 AND status = ${429}
          ORDER BY started_at DESC, request_id DESC LIMIT 51`,
        )
        expect(errors).toContain('request_logs_account_errors')
        const byKey = await explain(
          (tx) => tx`
          EXPLAIN SELECT request_id FROM request_logs WHERE account_id = ${accountId} AND key_id = ${keys[1]!.id}
          ORDER BY started_at DESC, request_id DESC LIMIT 51`,
        )
        expect(byKey).toContain('request_logs_key_time')
        for (const plan of [byModel, errors, byKey]) expect(plan).not.toContain('Seq Scan')
      })
    }
  })
}

describeWith('postgres', 'usage and activity routes: who may read them', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
  })
  afterAll(() => gw.close())

  const paths = ['/admin/v1/usage', '/admin/v1/activity', '/admin/v1/activity/summary']

  test('every member and a link session read; no session is 401; a suspended account still reads', async () => {
    const accountId = await gw.account('1')
    for (const role of ['owner', 'admin', 'member'] as const) {
      const { cookie } = await sessionFor(gw, accountId, role)
      for (const path of paths) expect((await admin(gw, 'GET', path, { cookie })).status).toBe(200)
    }
    for (const path of paths) expect((await admin(gw, 'GET', path)).status).toBe(401)
    await gw.app.operator.sql`UPDATE accounts SET status = 'suspended' WHERE id = ${accountId}`
    const { cookie } = await sessionFor(gw, accountId)
    for (const path of paths) expect((await admin(gw, 'GET', path, { cookie })).status).toBe(200)
  })

  describe('another account', () => {
    test("sees none of this account's requests", async () => {
      const accountId = await gw.account('1')
      await (
        await gw.chat((await gw.key(accountId)).key, {
          model: 'test/cheap',
          messages: [{ role: 'user', content: 'x' }],
        })
      ).arrayBuffer()
      await gw.app.gateway.writer.drain()
      const { cookie } = await sessionFor(gw, await gw.account('1'), 'owner')
      const activity = (await (
        await admin(gw, 'GET', '/admin/v1/activity', { cookie })
      ).json()) as Activity
      expect(activity.items).toEqual([])
      expect(
        ((await (await admin(gw, 'GET', '/admin/v1/usage', { cookie })).json()) as Usage).totals
          .requests,
      ).toBe(0)
    })
  })
})
