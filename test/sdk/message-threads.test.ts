// Message threads (the Messages style's `message-threads` beta) through the official SDK: its tool runner
// threads by default, and finishes on a provider of either style, streamed or not, each turn after the
// first a continue the gateway serves from the thread it kept, reaching the provider as the whole
// conversation, with the money right. A continue of a thread the gateway does not hold for the account
// is refused with `thread_not_found`, from which the SDK replays the whole conversation.
import Anthropic from '@anthropic-ai/sdk'
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { settledAccount } from '../helpers/ledger.ts'
import { describeWith, uniqueName } from '../helpers/services.ts'
import { storeSetups } from '../helpers/setups.ts'

const models = [
  testModel('openai/tools', 'fake?tools=1'),
  anthropicTestModel('anthropic/tools', 'fake?tools=1'),
  anthropicTestModel('anthropic/plain', 'fake'),
  anthropicTestModel('anthropic/thinking', 'fake?replay=threads/thinking-tool'),
  anthropicTestModel('anthropic/small', 'fake', { contextLength: 200, maxOutputTokens: 100 }),
]
const FINAL_TEXT = 'w0 w1 w2 w3 w4 '

type Exchange = { body: Record<string, unknown>; status: number; answer: unknown }
type Sent = {
  messages: { role: string; content: string | { type: string; tool_use_id?: string }[] }[]
  tools?: unknown[]
  system?: unknown
  thread?: unknown
}

function messageThreads(stores: { store: 'memory' | 'redis'; database: 'postgres' | 'embedded' }) {
  let gw: TestGateway
  let apiUrl: string
  let accountId: string
  let key: string
  let otherKey: string
  beforeAll(async () => {
    gw = await startTestGateway({ ...stores, models })
    apiUrl = gw.app.listen({ apiOnly: true }).apiUrl
    accountId = await gw.account('10')
    key = (await gw.key(accountId)).key
    otherKey = (await gw.key(await gw.account('10'))).key
  })
  afterAll(() => gw?.close())

  /**
   * An SDK client whose requests to /v1/messages are recorded with their answers; `rewrite` changes a
   * request (its body and key) before it is sent.
   */
  const client = (
    exchanges: Exchange[],
    rewrite?: (body: Record<string, unknown>, headers: Headers) => void,
  ) =>
    new Anthropic({
      baseURL: apiUrl,
      apiKey: key,
      maxRetries: 0,
      fetch: async (url, init) => {
        if (!String(url).endsWith('/v1/messages')) return fetch(url, init)
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>
        const headers = new Headers(init?.headers)
        rewrite?.(body, headers)
        const response = await fetch(url, { ...init, headers, body: JSON.stringify(body) })
        const exchange: Exchange = { body, status: response.status, answer: undefined }
        exchanges.push(exchange)
        if (body.stream !== true || response.status !== 200)
          exchange.answer = await response.clone().json()
        return response
      },
    })

  const weather = (calls: unknown[]) =>
    betaTool({
      name: 'get_weather',
      description: 'The weather in a city',
      inputSchema: {
        type: 'object',
        properties: { location: { type: 'string' }, unit: { type: 'string' } },
        required: ['location'],
      },
      run: (input) => {
        calls.push(input)
        return 'sunny, 21 C'
      },
    })

  const run = async (
    model: string,
    stream: boolean,
    rewrite?: (body: Record<string, unknown>, headers: Headers) => void,
  ) => {
    const exchanges: Exchange[] = []
    const calls: unknown[] = []
    const sentBefore = gw.upstream.requests.length
    const runner = client(exchanges, rewrite).beta.messages.toolRunner({
      model,
      max_tokens: 200,
      system: 'You report the weather.',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weather(calls)],
      ...(stream ? { stream: true as const } : {}),
    })
    const final = await runner.runUntilDone()
    const sent = gw.upstream.requests.slice(sentBefore)
    return { final, exchanges, calls, sent }
  }

  const text = (message: { content: { type: string; text?: string }[] }) =>
    message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')

  /** The provider got the whole conversation each turn, in its own style, with no thread and no threads beta. */
  const expectWholeConversations = (
    provider: 'anthropic' | 'openai',
    sent: { body: Record<string, unknown>; headers: Record<string, string> }[],
  ) => {
    expect(sent).toHaveLength(2)
    const [first, second] = sent.map((request) => request.body as unknown as Sent)
    for (const request of sent) {
      expect(request.body.thread).toBeUndefined()
      expect(request.headers['anthropic-beta'] ?? '').not.toContain('message-threads')
    }
    if (provider === 'anthropic') {
      expect(first!.messages).toHaveLength(1)
      expect(second!.system).toBe('You report the weather.')
      expect(second!.tools).toHaveLength(1)
      expect(second!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
      const [, call, result] = second!.messages
      const use = (call!.content as { type: string; id?: string }[]).find(
        (block) => block.type === 'tool_use',
      )
      expect((result!.content as { type: string; tool_use_id?: string }[])[0]).toMatchObject({
        type: 'tool_result',
        tool_use_id: use!.id,
      })
    } else {
      expect(second!.tools).toHaveLength(1)
      expect(second!.messages.map((message) => message.role)).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
      ])
    }
  }

  const expectMoneyRight = async (account = accountId) => {
    const { snapshot, ledger } = await settledAccount(gw, account)
    expect(snapshot.heldNano).toBe(0)
    expect(snapshot.inFlight).toBe(0)
    expect(snapshot.balanceNano).toBe(ledger.reduce((sum, row) => sum + row.amount_nano, 0))
  }

  for (const provider of ['anthropic', 'openai'] as const)
    for (const stream of [false, true])
      test(`the SDK's tool runner finishes over a provider of ${provider} style${stream ? ', streamed' : ''}`, async () => {
        const { final, calls, exchanges, sent } = await run(`${provider}/tools`, stream)
        expect(text(final)).toBe(FINAL_TEXT)
        expect(calls).toEqual([{ location: 'Paris', unit: 'c' }])
        expect(exchanges[0]!.body.thread).toEqual({ type: 'create' })
        // The second turn continues the thread (only the tool result sent) and is served from it.
        expect(exchanges.map((exchange) => exchange.status)).toEqual([200, 200])
        expect(exchanges[1]!.body).toMatchObject({ thread: { type: 'continue' } })
        if (!stream)
          expect(
            (exchanges[1]!.body.thread as { previous_message_id: string }).previous_message_id,
          ).toBe((exchanges[0]!.answer as { id: string }).id)
        expect(exchanges[1]!.body.messages).toHaveLength(1)
        expect(exchanges[1]!.body.system).toBeUndefined()
        expect(exchanges[1]!.body.tools).toBeUndefined()
        expectWholeConversations(provider, sent)
        await expectMoneyRight()
      })

  test("the SDK's explicit thread: each send after the first a continue, over a provider of openai style", async () => {
    const exchanges: Exchange[] = []
    const sentBefore = gw.upstream.requests.length
    const thread = client(exchanges).beta.messages.thread({
      model: 'openai/tools',
      max_tokens: 100,
      system: 'Be brief.',
    })
    const first = await thread.send({ role: 'user', content: 'Hello' })
    const second = await thread.stream({ role: 'user', content: 'And then?' }).finalMessage()
    const third = await thread.send({ role: 'user', content: 'Thanks' })
    for (const reply of [first, second, third]) expect(text(reply)).toBe(FINAL_TEXT)
    expect(exchanges.map((exchange) => [exchange.status, exchange.body.thread])).toEqual([
      [200, { type: 'create' }],
      [200, { type: 'continue', previous_message_id: first.id }],
      [200, { type: 'continue', previous_message_id: second.id }],
    ])
    const last = gw.upstream.requests.at(-1)!.body as unknown as Sent
    expect(gw.upstream.requests.length - sentBefore).toBe(3)
    expect(last.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ])
    // Each continue keeps only what it added (the message sent and the reply), under the one it continued.
    await Bun.sleep(50)
    const rows = await gw.app.operator.sql<
      { id: string; parent_id: string | null; root_id: string; messages: number }[]
    >`SELECT id, parent_id, root_id, json_array_length(conversation -> 'messages') AS messages
      FROM stored_responses WHERE id IN (${first.id}, ${second.id}, ${third.id})`
    expect(Object.fromEntries(rows.map((row) => [row.id, row]))).toEqual({
      [first.id]: { id: first.id, parent_id: null, root_id: first.id, messages: 2 },
      [second.id]: { id: second.id, parent_id: first.id, root_id: first.id, messages: 2 },
      [third.id]: { id: third.id, parent_id: second.id, root_id: first.id, messages: 2 },
    })
    await expectMoneyRight()
  })

  const post = (body: Record<string, unknown>, as = key, url = apiUrl) =>
    fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': as,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'message-threads-2026-08-12',
      },
      body: JSON.stringify({ max_tokens: 100, ...body }),
    })
  const created = async (body: Record<string, unknown>, as = key) => {
    const response = await post({ thread: { type: 'create' }, ...body }, as)
    expect(response.status).toBe(200)
    return (await response.json()) as { id: string; content: unknown[] }
  }

  test('a thread continues in another process, and a continue may not change system or tools', async () => {
    // Its own account: with admission in memory, each process keeps the balance of its own charges.
    const account = await gw.account('10')
    const ownKey = (await gw.key(account)).key
    const sibling = await startTestGateway({ ...stores, models, sibling: gw })
    try {
      const siblingUrl = sibling.app.listen({ apiOnly: true }).apiUrl
      const tools = [{ name: 'ping', input_schema: { type: 'object', properties: {} } }]
      const first = await created(
        {
          model: 'anthropic/plain',
          system: 'Be brief.',
          tools,
          messages: [{ role: 'user', content: 'Hello' }],
        },
        ownKey,
      )
      const next = {
        model: 'anthropic/plain',
        thread: { type: 'continue', previous_message_id: first.id },
        messages: [{ role: 'user', content: 'And then?' }],
      }
      for (const [field, value] of [
        ['system', 'Be long.'],
        ['tools', []],
      ] as const) {
        const changed = await post({ ...next, [field]: value }, ownKey, siblingUrl)
        expect(changed.status).toBe(400)
        const { error } = (await changed.json()) as { error: { message: string } }
        expect(error.message.startsWith(`${field}:`)).toBe(true)
      }
      const sentBefore = gw.upstream.requests.length
      const continued = await post({ ...next, system: 'Be brief.' }, ownKey, siblingUrl)
      expect(continued.status).toBe(200)
      const [sent] = gw.upstream.requests.slice(sentBefore).map((request) => request.body)
      expect(sent).toMatchObject({ system: 'Be brief.', tools })
      expect((sent as unknown as Sent).messages).toEqual([
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: first.content as Sent['messages'][number]['content'] },
        { role: 'user', content: 'And then?' },
      ])
      if (stores.store === 'redis') await expectMoneyRight(account)
    } finally {
      await sibling.close()
    }
  })

  /** A streamed thread the replayed provider answers as `msg_01ThinkThread`: thinking, then a tool call. */
  const createThinkingThread = async (question: string) => {
    const response = await post({
      model: 'anthropic/thinking',
      stream: true,
      thread: { type: 'create' },
      messages: [{ role: 'user', content: question }],
    })
    expect(response.status).toBe(200)
    expect(await response.text()).toContain('message_stop')
  }
  /** The continue of that thread with the tool's result. */
  const continueThinkingThread = () =>
    post({
      model: 'anthropic/plain',
      thread: { type: 'continue', previous_message_id: 'msg_01ThinkThread' },
      messages: [
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_01Think', content: 'sunny' }],
        },
      ],
    })

  test('a streamed reply is kept as the client received it, thinking and its signature included', async () => {
    await createThinkingThread('Weather in Paris?')
    const sentBefore = gw.upstream.requests.length
    const continued = await continueThinkingThread()
    expect(continued.status).toBe(200)
    const sent = gw.upstream.requests[sentBefore]!.body as unknown as Sent
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'The user wants the weather.',
          signature: 'EqQBCkYIBxgCKkBsig==',
        },
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool_use',
          id: 'toolu_01Think',
          name: 'get_weather',
          input: { location: 'Paris' },
        },
      ] as never,
    })
    expect(sent.messages).toHaveLength(3)
    await expectMoneyRight()
  })

  test("a continue's prompt is the whole conversation: the context must hold it all", async () => {
    const long = 'word '.repeat(120)
    const first = await created({
      model: 'anthropic/small',
      messages: [{ role: 'user', content: long }],
    })
    const continued = await post({
      model: 'anthropic/small',
      thread: { type: 'continue', previous_message_id: first.id },
      messages: [{ role: 'user', content: long }],
    })
    expect(continued.status).toBe(400)
    const { error } = (await continued.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('context_too_long')
    const tokens = Number(/has (\d+) tokens/.exec(error.message)![1])
    expect(tokens).toBeGreaterThan(240)
    await expectMoneyRight()
  })

  test('the guardrail inspects what a continue sends; the thread is kept as sent, redacted', async () => {
    const account = await gw.account('10')
    const guardedKey = await gw.key(account)
    const { sql } = gw.app.gateway
    const guardrail = uniqueName('gr_')
    await sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${guardrail}, ${account}, 'g', ${sql.json([{ detector: 'email', action: 'redact' }] as never)})`
    await sql`UPDATE api_keys SET guardrail_id = ${guardrail} WHERE id = ${guardedKey.id}`
    await gw.app.gateway.keys.invalidate({ accountId: account })
    const email = 'jane.doe@example.com'
    const first = await created(
      { model: 'anthropic/plain', messages: [{ role: 'user', content: `Mail ${email}` }] },
      guardedKey.key,
    )
    const sentBefore = gw.upstream.requests.length
    const continued = await post(
      {
        model: 'anthropic/plain',
        thread: { type: 'continue', previous_message_id: first.id },
        messages: [{ role: 'user', content: `Also ${email}` }],
      },
      guardedKey.key,
    )
    expect(continued.status).toBe(200)
    expect(continued.headers.get('x-service-guardrail-redactions')).toBe('email=1')
    const sent = JSON.stringify(gw.upstream.requests[sentBefore]!.body)
    expect(sent).not.toContain(email)
    expect(sent.match(/\[REDACTED:email\]/g)?.length).toBe(2)
  })

  test('a kept thread is not a stored response: GET /v1/responses/{id} does not find it', async () => {
    const reply = await created({
      model: 'anthropic/plain',
      messages: [{ role: 'user', content: 'Hello' }],
    })
    expect(reply.id.startsWith('msg_')).toBe(true)
    const read = await fetch(`${apiUrl}/v1/responses/${reply.id}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(read.status).toBe(404)
    const deleted = await fetch(`${apiUrl}/v1/responses/${reply.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    })
    expect(deleted.status).toBe(404)
    const continued = await post({
      model: 'anthropic/plain',
      thread: { type: 'continue', previous_message_id: reply.id },
      messages: [{ role: 'user', content: 'Still there?' }],
    })
    expect(continued.status).toBe(200)
    // A continue may send no message (after a pause_turn reply the thread resumes); a create may not.
    const sentBefore = gw.upstream.requests.length
    const resumed = await post({
      model: 'anthropic/plain',
      thread: { type: 'continue', previous_message_id: reply.id },
      messages: [],
    })
    expect(resumed.status).toBe(200)
    expect((gw.upstream.requests[sentBefore]!.body as unknown as Sent).messages).toHaveLength(2)
    const empty = await post({ model: 'anthropic/plain', thread: { type: 'create' }, messages: [] })
    expect(empty.status).toBe(400)
  })

  test('a reply ID the provider repeats is continued by neither thread: the client replays its own', async () => {
    // The replayed provider answers every request with the same message ID.
    for (const city of ['Rome', 'Oslo']) await createThinkingThread(`Weather in ${city}?`)
    const sentBefore = gw.upstream.requests.length
    const continued = await continueThinkingThread()
    expect(continued.status).toBe(404)
    expect(await continued.json()).toMatchObject({
      error: { details: { error_code: 'thread_not_found' } },
    })
    expect(gw.upstream.requests.length).toBe(sentBefore)
  })

  test('a thread field of another form is refused naming it', async () => {
    const post = (thread: unknown) =>
      fetch(`${apiUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'anthropic/tools',
          max_tokens: 50,
          thread,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      })
    for (const [thread, param] of [
      [{ type: 'fork' }, 'thread.type'],
      [{ type: 'continue' }, 'thread.previous_message_id'],
      [{ type: 'create', extra: 1 }, 'thread.extra'],
      ['create', 'thread'],
    ] as const) {
      const response = await post(thread)
      expect(response.status).toBe(400)
      const { error } = (await response.json()) as { error: { message: string } }
      expect(error.message.startsWith(`${param}:`)).toBe(true)
    }
  })

  test('a continue of an unknown thread is refused with thread_not_found, before admission', async () => {
    const sentBefore = gw.upstream.requests.length
    const response = await fetch(`${apiUrl}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'message-threads-2026-08-12',
      },
      body: JSON.stringify({
        model: 'anthropic/tools',
        max_tokens: 50,
        thread: { type: 'continue', previous_message_id: 'msg_unknown' },
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', details: { error_code: 'thread_not_found' } },
    })
    expect(gw.upstream.requests.length).toBe(sentBefore)
    await expectMoneyRight()
  })

  test("a continue of an unknown thread or another account's: the SDK replays the whole conversation", async () => {
    const unknown = await run('anthropic/tools', false, (body) => {
      const thread = body.thread as { type: string; previous_message_id?: string }
      if (thread.type === 'continue') thread.previous_message_id = 'msg_unknown'
    })
    let first = true
    const otherAccount = await run('openai/tools', true, (_body, headers) => {
      if (!first) {
        headers.set('x-api-key', otherKey)
        headers.set('authorization', `Bearer ${otherKey}`)
      }
      first = false
    })
    for (const { final, exchanges, sent } of [unknown, otherAccount]) {
      expect(text(final)).toBe(FINAL_TEXT)
      expect(exchanges.map((exchange) => exchange.status)).toEqual([200, 404, 200])
      expect(exchanges[1]!.answer).toMatchObject({
        error: { details: { error_code: 'thread_not_found' } },
      })
      expect(exchanges[2]!.body.thread).toEqual({ type: 'create' })
      expect(sent).toHaveLength(2)
    }
    await expectMoneyRight()
  })
}

for (const setup of storeSetups)
  describeWith(
    [...setup.needs],
    `message threads (${setup.store} admission, ${setup.database} database)`,
    () => messageThreads(setup),
  )
