// Stored Responses over HTTP, on embedded and real stores: kept RESPONSES_RETENTION_DAYS (none when 0),
// never with `store: false`, and a follow-up that reaches another process before the first response is
// written finds it once it is; on the embedded database, which only its own process writes, a missing one
// is refused at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const models = [testModel('openai/plain', 'fake'), testModel('openai/slow', 'fake?delay=400')]
type Stores = { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }

function storedResponses(stores: Stores) {
  let first: TestGateway
  let second: TestGateway
  let keep0: TestGateway
  const urls = new Map<TestGateway, string>()
  let key: string
  let key0: string

  const post = (gw: TestGateway, body: Record<string, unknown>, as = key) =>
    fetch(`${urls.get(gw)}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const read = (gw: TestGateway, id: string, as = key) =>
    fetch(`${urls.get(gw)}/v1/responses/${id}`, { headers: { authorization: `Bearer ${as}` } })
  const expiresInDays = async (gw: TestGateway, id: string) => {
    const [row] = await gw.app.operator.sql<
      { days: number }[]
    >`SELECT extract(epoch FROM expires_at - created_at)::float8 / 86400 AS days FROM stored_responses WHERE id = ${id}`
    return row?.days
  }

  beforeAll(async () => {
    first = await startTestGateway({
      ...stores,
      models,
      env: { RESPONSES_RETENTION_DAYS: '7', RESPONSES_FOLLOW_UP_WAIT_MS: '300' },
    })
    // A second process on the same database.
    second = await startTestGateway({
      ...stores,
      models,
      sibling: first,
      env: { RESPONSES_RETENTION_DAYS: '7', RESPONSES_FOLLOW_UP_WAIT_MS: '3000' },
    })
    keep0 = await startTestGateway({
      ...stores,
      models,
      env: { RESPONSES_RETENTION_DAYS: '0', RESPONSES_FOLLOW_UP_WAIT_MS: '3000' },
    })
    for (const gw of [first, second, keep0]) urls.set(gw, gw.app.listen({ apiOnly: true }).apiUrl)
    key = (await first.key(await first.account('5'))).key
    key0 = (await keep0.key(await keep0.account('5'))).key
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
    await keep0?.close()
  })

  test('a response is kept for the configured days and followed up from another process', async () => {
    const answer = (await (await post(first, { model: 'openai/plain', input: 'hi' })).json()) as {
      id: string
    }
    const follow = await post(second, {
      model: 'openai/plain',
      input: 'more',
      previous_response_id: answer.id,
    })
    expect(follow.status).toBe(200)
    expect((await read(second, answer.id)).status).toBe(200)
    expect(await expiresInDays(first, answer.id)).toBeCloseTo(7, 3)
  })

  test('store: false keeps nothing', async () => {
    const answer = (await (
      await post(first, { model: 'openai/plain', input: 'hi', store: false })
    ).json()) as { id: string }
    await Bun.sleep(50)
    expect(await expiresInDays(first, answer.id)).toBeUndefined()
    expect((await read(first, answer.id)).status).toBe(404)
    const follow = await post(first, {
      model: 'openai/plain',
      input: 'more',
      previous_response_id: answer.id,
    })
    expect(follow.status).toBe(400)
  })

  const embedded = stores.database === 'embedded'
  test.skipIf(embedded)(
    'a follow-up waits for a response still being written elsewhere, then 400 once the wait is over',
    async () => {
      const id = `resp_${crypto.randomUUID().replaceAll('-', '')}`
      const [account] = await first.app.operator.sql<
        { account_id: string }[]
      >`SELECT account_id FROM api_keys ORDER BY created_at DESC LIMIT 1`
      // The other process's write lands 300 ms after the follow-up arrived.
      const landing = Bun.sleep(300).then(
        () => first.app.operator.sql`
        INSERT INTO stored_responses (id, root_id, account_id, conversation, response)
        VALUES (${id}, ${id}, ${account!.account_id}, ${first.app.operator.sql.json([{ role: 'assistant', text: 'earlier', toolCalls: [] }] as never)}, ${first.app.operator.sql.json({ id } as never)})`,
      )
      const started = Date.now()
      const follow = await post(second, {
        model: 'openai/plain',
        input: 'more',
        previous_response_id: id,
      })
      await landing
      expect(follow.status).toBe(200)
      expect(Date.now() - started).toBeGreaterThanOrEqual(290)
      // One that never comes is refused after the wait, naming the field.
      const missingStarted = Date.now()
      const missing = await post(second, {
        model: 'openai/plain',
        input: 'more',
        previous_response_id: 'resp_never',
      })
      expect(missing.status).toBe(400)
      expect(((await missing.json()) as { error: { param: string } }).error.param).toBe(
        'previous_response_id',
      )
      expect(Date.now() - missingStarted).toBeGreaterThanOrEqual(2_500)
    },
  )

  test.skipIf(embedded)(
    'retrieve, input items and delete wait for a response just answered and still being written elsewhere (openai SDK)',
    async () => {
      const client = new OpenAI({ baseURL: `${urls.get(second)}/v1`, apiKey: key, maxRetries: 0 })
      const [account] = await first.app.operator.sql<
        { account_id: string }[]
      >`SELECT account_id FROM api_keys ORDER BY created_at DESC LIMIT 1`
      // A response ID as the gateway makes them (its request's start time first), written 300 ms later.
      const landsLater = (input: string) => {
        const id = `resp_${Date.now().toString(36)}0000${crypto.randomUUID().slice(0, 8)}`
        const turns = [
          { role: 'user', content: [{ type: 'text', text: input }] },
          { role: 'assistant', text: 'earlier', toolCalls: [] },
        ]
        const landing = Bun.sleep(300).then(
          () => first.app.operator.sql`
          INSERT INTO stored_responses (id, root_id, account_id, conversation, response)
          VALUES (${id}, ${id}, ${account!.account_id}, ${first.app.operator.sql.json(turns as never)}, ${first.app.operator.sql.json({ id, object: 'response', output: [] } as never)})`,
        )
        return { id, landing }
      }

      const retrieved = landsLater('retrieve me')
      expect((await client.responses.retrieve(retrieved.id)).id).toBe(retrieved.id)
      await retrieved.landing

      const listed = landsLater('list me')
      const items = await client.responses.inputItems.list(listed.id)
      expect(items.data).toMatchObject([{ type: 'message', role: 'user' }])
      await listed.landing

      const deleted = landsLater('delete me')
      await client.responses.delete(deleted.id)
      await deleted.landing
      // A response of the account that was deleted is gone at once: no write can bring it back.
      const deletedAt = Date.now()
      expect(
        await client.responses.retrieve(deleted.id).catch((error: unknown) => error),
      ).toBeInstanceOf(OpenAI.NotFoundError)
      expect(Date.now() - deletedAt).toBeLessThan(1_000)

      // An ID this gateway did not make within the hour is refused at once.
      const started = Date.now()
      const missing = await client.responses.retrieve('resp_never').catch((error: unknown) => error)
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
      expect(Date.now() - started).toBeLessThan(1_000)
    },
  )

  test.if(embedded)(
    'on the embedded database (one process writes it) a missing response is refused at once',
    async () => {
      // RESPONSES_FOLLOW_UP_WAIT_MS is 3000 on the second process: nothing else could still be writing.
      const started = Date.now()
      const missing = await post(second, {
        model: 'openai/plain',
        input: 'more',
        previous_response_id: 'resp_never',
      })
      expect(missing.status).toBe(400)
      expect(Date.now() - started).toBeLessThan(1_000)
      // A response just answered by another gateway on the same database is found.
      for (let i = 0; i < 5; i++) {
        const answer = (await (
          await post(first, { model: 'openai/plain', input: 'hi' })
        ).json()) as {
          id: string
        }
        const follow = await post(second, {
          model: 'openai/plain',
          input: 'more',
          previous_response_id: answer.id,
        })
        expect(follow.status).toBe(200)
      }
    },
  )

  /** Answers `input`, following up `previous` when given; the response's ID. */
  const turn = async (input: string, previous?: string) => {
    const response = await post(first, {
      model: 'openai/plain',
      input,
      ...(previous ? { previous_response_id: previous } : {}),
    })
    expect(response.status).toBe(200)
    return ((await response.json()) as { id: string }).id
  }
  /** The texts of the user turns the provider got in the last request. */
  const sentUserTexts = () => {
    const body = first.upstream.requests.at(-1)!.body as {
      messages: { role: string; content: unknown }[]
    }
    return body.messages
      .filter((message) => message.role === 'user')
      .map((message) => JSON.stringify(message.content))
  }
  /**
   * The stored row of a response, once written (it is written after the answer), waited for up to 3 s;
   * `now`: as it is at once (a row expected gone).
   */
  const storedRow = async (id: string, now = false) => {
    for (let attempt = 0; ; attempt++) {
      const [row] = await first.app.operator.sql<
        { parent_id: string | null; root_id: string; turns: number }[]
      >`SELECT parent_id, root_id, json_array_length(conversation) AS turns FROM stored_responses WHERE id = ${id}`
      if (row || now || attempt === 60) return row
      await Bun.sleep(50)
    }
  }

  test('a follow-up keeps only its own turns, and a chain of them sends the whole conversation', async () => {
    const a = await turn('one')
    const b = await turn('two', a)
    const c = await turn('three', b)
    await turn('four', c)
    const sent = sentUserTexts()
    expect(sent).toHaveLength(4)
    expect(
      sent.map((text) => ['one', 'two', 'three', 'four'].find((word) => text.includes(word))),
    ).toEqual(['one', 'two', 'three', 'four'])
    // Each row holds its input and its answer, under the response it followed up.
    expect(await storedRow(a)).toEqual({ parent_id: null, root_id: a, turns: 2 })
    expect(await storedRow(c)).toEqual({ parent_id: b, root_id: a, turns: 2 })
  })

  test('a chain is purged whole once none of it is within its retention', async () => {
    const a = await turn('first of a chain')
    const b = await turn('second', a)
    const lone = await turn('a response of its own')
    await storedRow(b)
    await storedRow(lone)
    const sql = first.app.operator.sql
    await sql`UPDATE stored_responses SET expires_at = now() - interval '1 minute' WHERE id IN (${a}, ${lone})`
    await first.app.gateway.responses.purgeExpired()
    // The first is past its retention, but the second, within its own, still needs it.
    expect(await storedRow(a)).toBeDefined()
    expect(await storedRow(lone, true)).toBeUndefined()
    const c = await turn('third', b)
    expect(sentUserTexts().some((text) => text.includes('first of a chain'))).toBe(true)
    // Written after its answer: once there, it is expired with the rest of its chain below.
    await storedRow(c)
    const refused = await post(first, {
      model: 'openai/plain',
      input: 'x',
      previous_response_id: a,
    })
    expect(refused.status).toBe(400)
    await sql`UPDATE stored_responses SET expires_at = now() - interval '1 minute' WHERE root_id = ${a}`
    await first.app.gateway.responses.purgeExpired()
    expect(await storedRow(a, true)).toBeUndefined()
    expect(await storedRow(b, true)).toBeUndefined()
  })

  test('a deleted response that a later one follows up still reaches the provider through that one', async () => {
    const a = await turn('kept beneath')
    const b = await turn('deleted in the middle', a)
    const c = await turn('last', b)
    await storedRow(c)
    const deleted = await fetch(`${urls.get(first)}/v1/responses/${b}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(deleted.status).toBe(200)
    expect((await read(first, b)).status).toBe(404)
    const refused = await post(first, {
      model: 'openai/plain',
      input: 'x',
      previous_response_id: b,
    })
    expect(refused.status).toBe(400)
    await turn('after', c)
    const sent = sentUserTexts()
    expect(sent.some((text) => text.includes('deleted in the middle'))).toBe(true)
    // A deleted response nothing follows up keeps nothing.
    const leaf = await turn('deleted leaf')
    await storedRow(leaf)
    await fetch(`${urls.get(first)}/v1/responses/${leaf}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    })
    const [row] = await first.app.operator.sql<
      { conversation: string }[]
    >`SELECT conversation::text AS conversation FROM stored_responses WHERE id = ${leaf}`
    expect(row?.conversation).toBe('null')
  })

  test('a follow-up whose response was deleted while it was answered is kept whole, and can be followed up', async () => {
    const a = await turn('said before the delete')
    await storedRow(a)
    const answering = post(first, {
      model: 'openai/slow',
      input: 'answered meanwhile',
      previous_response_id: a,
    })
    await Bun.sleep(100)
    const deleted = await fetch(`${urls.get(first)}/v1/responses/${a}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(deleted.status).toBe(200)
    const b = (await (await answering).json()) as { id: string }
    // The deleted one had nothing following it when it went, so its turns went with it; the follow-up
    // holds the whole conversation it was answered from.
    expect(await storedRow(b.id)).toEqual({ parent_id: null, root_id: b.id, turns: 4 })
    await turn('and after', b.id)
    expect(sentUserTexts().some((text) => text.includes('said before the delete'))).toBe(true)
  })

  test.skipIf(embedded)(
    'a follow-up written while the response it continues is deleted can still be followed up',
    async () => {
      const a = await turn('deleted while its follow-up was written')
      await storedRow(a)
      const sql = first.app.operator.sql
      const store = first.app.gateway.responses
      const [row] = await sql<
        { account_id: string }[]
      >`SELECT account_id FROM stored_responses WHERE id = ${a}`
      const accountId = row!.account_id
      const b = `resp_${Date.now().toString(36)}0000${crypto.randomUUID().slice(0, 8)}`
      const added = [
        { role: 'user', content: [{ type: 'text', text: 'the follow-up' }] },
        { role: 'assistant', text: 'answered', toolCalls: [] },
      ]
      const whole = [
        {
          role: 'user',
          content: [{ type: 'text', text: 'deleted while its follow-up was written' }],
        },
        { role: 'assistant', text: 'earlier', toolCalls: [] },
        ...added,
      ]
      // A lock held on the row a moment makes the delete straddle the follow-up's write, as the timing
      // of two connections can: the delete starts first, the follow-up is written before it ends.
      let deleting: Promise<boolean> | undefined
      await sql.begin(async (tx) => {
        await tx`SELECT 1 FROM stored_responses WHERE id = ${a} FOR UPDATE`
        deleting = store.delete(a, accountId)
        await Bun.sleep(200)
        store.save(b, accountId, 'responses', added, { id: b }, { parentId: a, whole: () => whole })
        await Bun.sleep(200)
      })
      expect(await deleting).toBe(true)
      await storedRow(b)
      await turn('and after', b)
      expect(
        sentUserTexts().some((text) => text.includes('deleted while its follow-up was written')),
      ).toBe(true)
    },
  )

  test('deleting the last response that follows up deleted ones blanks their turns too', async () => {
    const a = await turn('kept first')
    const b = await turn('deleted second', a)
    const c = await turn('deleted third', b)
    await storedRow(c)
    const remove = (id: string) =>
      fetch(`${urls.get(first)}/v1/responses/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      })
    const blanked = async () =>
      (
        await first.app.operator.sql<{ id: string }[]>`
          SELECT id FROM stored_responses WHERE id IN (${a}, ${b}, ${c}) AND conversation::text = 'null'`
      ).map((row) => row.id)
    expect((await remove(b)).status).toBe(200)
    expect(await blanked()).toEqual([])
    expect((await remove(c)).status).toBe(200)
    // Nothing kept follows b up any more: its turns go with c's; a, still kept, keeps its own.
    expect((await blanked()).sort()).toEqual([b, c].sort())
    expect((await remove(c)).status).toBe(404)
    await turn('after', a)
    expect(sentUserTexts().some((text) => text.includes('kept first'))).toBe(true)
  })

  test('RESPONSES_RETENTION_DAYS=0: nothing is kept, and a follow-up says so at once', async () => {
    const answer = (await (
      await post(keep0, { model: 'openai/plain', input: 'hi' }, key0)
    ).json()) as { id: string }
    await Bun.sleep(50)
    expect(await expiresInDays(keep0, answer.id)).toBeUndefined()
    const started = Date.now()
    const follow = await post(
      keep0,
      { model: 'openai/plain', input: 'more', previous_response_id: answer.id },
      key0,
    )
    expect(follow.status).toBe(400)
    expect(((await follow.json()) as { error: { message: string } }).error.message).toContain(
      'keeps no responses',
    )
    expect(Date.now() - started).toBeLessThan(1_000)
  })
}

describe('stored responses (embedded stores)', () =>
  storedResponses({ store: 'memory', database: 'embedded' }))
describeWith(['postgres', 'redis'], 'stored responses (PostgreSQL and Redis)', () =>
  storedResponses({ store: 'redis', database: 'postgres' }),
)
