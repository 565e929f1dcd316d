// Guardrails on the request path: a block refuses before anything is held or sent and names only the
// detector; redaction rewrites every text the model would read (tool results included) in every client
// style; the budget caps spend across the guardrail's keys in the same atomic admission.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  startTestGateway,
  testModel,
  anthropicTestModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { readActivity } from '../../../../proxy/accounts/usage/activity.ts'
import { holdsEnded, settledAccount } from '../../../helpers/ledger.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'

const email = 'jane.doe@example.com'
const card = '4111 1111 1111 1111'

describeWith(['postgres', 'redis'], 'guardrails on requests', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({
      store: 'redis',
      database: 'postgres',
      models: [testModel('test/cheap', 'cheap'), anthropicTestModel('test/claude', 'claude')],
    })
  })
  afterAll(() => gw.close())

  /** A key on a fresh account with a guardrail of these filters (and budget, in nano-USD). */
  async function guarded(filters: unknown[], budgetNano: number | null = null, usd = '1') {
    const accountId = await gw.account(usd)
    const key = await gw.key(accountId)
    const id = uniqueName('gr_')
    const { sql } = gw.app.gateway
    await sql`INSERT INTO guardrails (id, account_id, name, filters, budget_nano) VALUES (${id}, ${accountId}, 'g', ${sql.json(filters as never)}, ${budgetNano})`
    await sql`UPDATE api_keys SET guardrail_id = ${id} WHERE id = ${key.id}`
    await gw.app.gateway.keys.invalidate({ accountId })
    return { accountId, key: key.key, keyId: key.id, guardrailId: id }
  }
  const lastUpstreamBody = () => JSON.stringify(gw.upstream.requests.at(-1)!.body)
  const post = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
    gw.app.api.handle(
      new Request(`http://gateway.test${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    )

  test('a block filter refuses with 403 guardrail_blocked naming the detector, never the text; nothing sent or held', async () => {
    const { accountId, key } = await guarded([
      { detector: 'email', action: 'redact' },
      { detector: 'credit_card', action: 'block' },
    ])
    const sent = gw.upstream.requests.length
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: `charge ${card} for ${email}` }],
    })
    expect(response.status).toBe(403)
    expect(response.headers.get('x-service-error-code')).toBe('guardrail_blocked')
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('guardrail_blocked')
    expect(error.message).toContain('credit_card')
    expect(error.message).not.toContain('4111')
    expect(gw.upstream.requests.length).toBe(sent)
    expect(await holdsEnded(gw, accountId)).toMatchObject({
      heldNano: 0,
      inFlight: 0,
      balanceNano: 1_000_000_000,
    })
  })

  test('redaction rewrites message text, tool results and tool arguments before dispatch (Chat Completions)', async () => {
    const { key } = await guarded([{ detector: 'email', action: 'redact' }])
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [
        { role: 'system', content: `Escalate to ${email}.` },
        { role: 'user', content: [{ type: 'text', text: `Mail ${email} please` }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'lookup', arguments: JSON.stringify({ to: email }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: `found ${email}` },
      ],
    })
    expect(response.status).toBe(200)
    const sent = lastUpstreamBody()
    expect(sent).not.toContain(email)
    expect(sent.match(/\[REDACTED:email\]/g)?.length).toBe(4)
    expect(response.headers.get('x-service-guardrail-redactions')).toBe('email=4')
  })

  test('redactions are reported by detector: in a header of the answer or the stream, and in the activity view', async () => {
    const { accountId, key } = await guarded([
      { detector: 'email', action: 'redact' },
      { detector: 'keywords', action: 'redact', keywords: ['Falcon'], name: 'codenames' },
      { detector: 'phone', action: 'redact' },
    ])
    const content = `Falcon: mail ${email} or ${email}, Falcon`
    const answer = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content }],
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-service-guardrail-redactions')).toBe('email=2, codenames=2')
    const stream = await gw.chat(key, {
      model: 'test/cheap',
      stream: true,
      messages: [{ role: 'user', content: `Falcon ${email}` }],
    })
    expect(stream.headers.get('x-service-guardrail-redactions')).toBe('email=1, codenames=1')
    await stream.text()
    const clean = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'nothing to hide' }],
    })
    expect(clean.headers.get('x-service-guardrail-redactions')).toBeNull()
    await settledAccount(gw, accountId)
    const activity = await readActivity(gw.app.gateway.sql, accountId, {})
    expect(activity.items.map((item) => item.guardrailRedactions)).toEqual([
      null,
      'email=1, codenames=1',
      'email=2, codenames=2',
    ])
  })

  test('a filter named outside ASCII is reported percent-encoded in the header, as written in the activity view', async () => {
    const { accountId, key } = await guarded([
      { detector: 'email', action: 'redact', name: 'Clé € 100%' },
    ])
    for (const stream of [false, true]) {
      const response = await gw.chat(key, {
        model: 'test/cheap',
        stream,
        messages: [{ role: 'user', content: `mail ${email}` }],
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('x-service-guardrail-redactions')).toBe(
        'Cl%C3%A9 %E2%82%AC 100%25=1',
      )
      await response.text()
    }
    await settledAccount(gw, accountId)
    const activity = await readActivity(gw.app.gateway.sql, accountId, {})
    expect(activity.items.map((item) => item.guardrailRedactions)).toEqual([
      'Clé € 100%=1',
      'Clé € 100%=1',
    ])
  })

  test('redaction in the Messages style reaches tool_result blocks, over a provider of the same style', async () => {
    const { key } = await guarded([{ detector: 'email', action: 'redact' }])
    const response = await post(
      '/v1/messages',
      key,
      {
        model: 'test/claude',
        max_tokens: 20,
        system: `Contact ${email}`,
        messages: [
          { role: 'user', content: 'who?' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { query: email } }],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                content: [{ type: 'text', text: `it is ${email}` }],
              },
            ],
          },
        ],
      },
      { 'anthropic-version': '2023-06-01' },
    )
    expect(response.status).toBe(200)
    const sent = lastUpstreamBody()
    expect(sent).not.toContain(email)
    expect(sent.match(/\[REDACTED:email\]/g)?.length).toBe(3)
  })

  test('redaction in the Responses style reaches instructions and function outputs', async () => {
    const { key } = await guarded([
      { detector: 'keywords', action: 'redact', keywords: ['Project Falcon'] },
    ])
    const response = await post('/v1/responses', key, {
      model: 'test/cheap',
      instructions: 'Never mention project falcon.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'Status of Project Falcon?' }],
        },
        {
          type: 'function_call',
          call_id: 'f1',
          name: 'status',
          arguments: '{"name":"Project Falcon"}',
        },
        { type: 'function_call_output', call_id: 'f1', output: 'Project Falcon ships Friday' },
      ],
    })
    expect(response.status).toBe(200)
    const sent = lastUpstreamBody()
    expect(sent.toLowerCase()).not.toContain('project falcon')
  })

  test('the guardrail budget caps spend across its keys in the admission, counting open holds', async () => {
    // 1,000 output tokens on test/cheap hold about $0.002; a $0.0025 budget admits one such request at a time.
    const first = await guarded([], 2_500_000, '5')
    const second = await gw.key(first.accountId)
    await gw.app.gateway
      .sql`UPDATE api_keys SET guardrail_id = ${first.guardrailId} WHERE id = ${second.id}`
    await gw.app.gateway.keys.invalidate({ accountId: first.accountId })
    const open = gw.chat(first.key, {
      model: 'test/cheap',
      max_tokens: 1_000,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    })
    const running = await open
    expect(running.status).toBe(200)
    const refused = await gw.chat(second.key, {
      model: 'test/cheap',
      max_tokens: 1_000,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(refused.status).toBe(403)
    const { error } = (await refused.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('spend_limit_exceeded')
    expect(error.message).toContain("guardrail's monthly budget")
    await running.text()
    await holdsEnded(gw, first.accountId)
    // The first request was charged far less than its hold: a small request fits again.
    expect(
      (
        await gw.chat(second.key, {
          model: 'test/cheap',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'hi' }],
        })
      ).status,
    ).toBe(200)
    const snapshot = await gw.app.gateway.store.snapshot(first.accountId)
    expect(
      snapshot.guardrails.find((g) => g.guardrailId === first.guardrailId)?.monthSpentNano,
    ).toBeGreaterThan(0)
  })

  test('a guardrail whose stored filters cannot be compiled refuses rather than letting content through', async () => {
    const { key } = await guarded([{ detector: 'regex', action: 'block', pattern: '(' }])
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(response.status).toBe(403)
    expect(response.headers.get('x-service-error-code')).toBe('guardrail_blocked')
  })

  describe('every text an SDK sends is inspected where it stands', () => {
    const secret = `mail ${email} about Project Falcon`
    const documents: [string, Anthropic.ContentBlockParam][] = [
      [
        'a document of text',
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: secret } },
      ],
      [
        'a document of content blocks',
        {
          type: 'document',
          source: { type: 'content', content: [{ type: 'text', text: secret }] },
        },
      ],
      [
        "a document's title and context",
        {
          type: 'document',
          title: secret,
          context: secret,
          source: { type: 'text', media_type: 'text/plain', data: 'x' },
        },
      ],
      [
        'a search result',
        {
          type: 'search_result',
          source: 'https://example.com',
          title: secret,
          content: [{ type: 'text', text: secret }],
        },
      ],
    ]
    const refusal = async (promise: Promise<unknown>) => {
      try {
        await promise
      } catch (caught) {
        return caught as InstanceType<typeof Anthropic.APIError> & {
          error: { error: { type: string; code: string; message: string } }
        }
      }
      throw new Error('expected a refusal')
    }

    test('Messages: a block filter refuses documents, search results and tool descriptions, nothing sent', async () => {
      const { key } = await guarded([{ detector: 'email', action: 'block' }])
      const client = new Anthropic({ baseURL: gw.app.listen().apiUrl, apiKey: key, maxRetries: 0 })
      const requests: [string, Anthropic.MessageCreateParamsNonStreaming][] = documents.map(
        ([label, block]) => [
          label,
          {
            model: '',
            max_tokens: 20,
            messages: [{ role: 'user', content: [block, { type: 'text', text: 'summarize' }] }],
          },
        ],
      )
      requests.push([
        'a tool description',
        {
          model: '',
          max_tokens: 20,
          tools: [{ name: 'send', description: secret, input_schema: { type: 'object' } }],
          messages: [{ role: 'user', content: 'hi' }],
        },
      ])
      for (const model of ['test/claude', 'test/cheap'])
        for (const [label, request] of requests) {
          const sent = gw.upstream.requests.length
          const caught = await refusal(client.messages.create({ ...request, model }))
          expect([label, model, caught.status]).toEqual([label, model, 403])
          expect(caught).toBeInstanceOf(Anthropic.PermissionDeniedError)
          expect(caught.error.error).toMatchObject({
            type: 'permission_error',
            code: 'guardrail_blocked',
          })
          expect(caught.error.error.message).toContain('email filter')
          expect(caught.error.error.message).not.toContain(email)
          expect(gw.upstream.requests.length).toBe(sent)
        }
    })

    test('Messages: redaction rewrites those texts in place in the body the provider receives', async () => {
      const { key } = await guarded([
        { detector: 'keywords', action: 'redact', keywords: ['Project Falcon'], name: 'codenames' },
      ])
      const client = new Anthropic({ baseURL: gw.app.listen().apiUrl, apiKey: key, maxRetries: 0 })
      const { response } = await client.messages
        .create({
          model: 'test/claude',
          max_tokens: 20,
          tools: [
            {
              name: 'send',
              description: secret,
              input_schema: {
                type: 'object',
                properties: { to: { type: 'string', description: secret } },
              },
            },
          ],
          messages: [
            {
              role: 'user',
              content: [
                ...documents.map(([, block]) => block),
                { type: 'text', text: 'summarize' },
              ],
            },
          ],
        })
        .withResponse()
      expect(response.headers.get('x-service-guardrail-redactions')).toBe('codenames=8')
      const body = gw.upstream.requests.at(-1)!.body as {
        tools: { description: string; input_schema: { properties: { to: unknown } } }[]
        messages: { content: Record<string, unknown>[] }[]
      }
      expect(JSON.stringify(body)).not.toContain('Falcon')
      const redacted = `mail ${email} about [REDACTED:codenames]`
      expect(body.tools[0]!.description).toBe(redacted)
      expect(body.tools[0]!.input_schema.properties.to).toEqual({
        type: 'string',
        description: redacted,
      })
      const [text, content, titled, result] = body.messages[0]!.content
      expect(text).toMatchObject({ source: { type: 'text', data: redacted } })
      expect(content).toMatchObject({ source: { content: [{ text: redacted }] } })
      expect(titled).toMatchObject({ title: redacted, context: redacted })
      expect(result).toMatchObject({ title: redacted, content: [{ text: redacted }] })
    })

    test('Chat Completions: tool descriptions and files of text are redacted where they stand', async () => {
      const { key } = await guarded([{ detector: 'email', action: 'redact' }])
      const client = new OpenAI({
        baseURL: `${gw.app.listen().apiUrl}/v1`,
        apiKey: key,
        maxRetries: 0,
      })
      const { response } = await client.chat.completions
        .create({
          model: 'test/cheap',
          tools: [
            {
              type: 'function',
              function: {
                name: 'send',
                description: secret,
                parameters: {
                  type: 'object',
                  properties: { to: { type: 'string', enum: [email] } },
                },
              },
            },
          ],
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'summarize' },
                {
                  type: 'file',
                  file: {
                    filename: 'notes.txt',
                    file_data: `data:text/plain;base64,${Buffer.from(secret).toString('base64')}`,
                  },
                },
              ],
            },
          ],
        })
        .withResponse()
      expect(response.headers.get('x-service-guardrail-redactions')).toBe('email=3')
      const body = gw.upstream.requests.at(-1)!.body as {
        tools: { function: { description: string; parameters: unknown } }[]
        messages: { content: { file?: { file_data: string } }[] }[]
      }
      const redacted = 'mail [REDACTED:email] about Project Falcon'
      expect(body.tools[0]!.function.description).toBe(redacted)
      expect(body.tools[0]!.function.parameters).toEqual({
        type: 'object',
        properties: { to: { type: 'string', enum: ['[REDACTED:email]'] } },
      })
      const data = body.messages[0]!.content[1]!.file!.file_data
      expect(Buffer.from(data.slice(data.indexOf(',') + 1), 'base64').toString()).toBe(redacted)
    })

    test('Responses: a block filter refuses a tool description or an output format, nothing sent', async () => {
      const { key } = await guarded([{ detector: 'email', action: 'block' }])
      const client = new OpenAI({
        baseURL: `${gw.app.listen().apiUrl}/v1`,
        apiKey: key,
        maxRetries: 0,
      })
      const sent = gw.upstream.requests.length
      for (const request of [
        {
          tools: [
            {
              type: 'function' as const,
              name: 'send',
              description: secret,
              parameters: { type: 'object' },
              strict: false,
            },
          ],
        },
        {
          text: {
            format: {
              type: 'json_schema' as const,
              name: 'r',
              description: secret,
              schema: { type: 'object' },
            },
          },
        },
      ]) {
        const caught = (await client.responses
          .create({ model: 'test/cheap', input: 'hi', ...request })
          .catch((error: unknown) => error)) as InstanceType<typeof OpenAI.APIError>
        expect(caught).toBeInstanceOf(OpenAI.PermissionDeniedError)
        expect(caught.code).toBe('guardrail_blocked')
      }
      expect(gw.upstream.requests.length).toBe(sent)
    })
  })

  describe('the kept conversation a follow-up continues', () => {
    /** Another key of the same account, without a guardrail. */
    const unguardedKey = async (accountId: string) => (await gw.key(accountId)).key

    test('Responses: a block filter refuses a follow-up of a stored response that holds the content, nothing sent', async () => {
      const { accountId, key } = await guarded([{ detector: 'email', action: 'block' }])
      const first = await post('/v1/responses', await unguardedKey(accountId), {
        model: 'test/claude',
        input: `Remember ${email}`,
      })
      expect(first.status).toBe(200)
      const { id } = (await first.json()) as { id: string }
      const sent = gw.upstream.requests.length
      const followUp = await post('/v1/responses', key, {
        model: 'test/cheap',
        previous_response_id: id,
        input: 'What did I ask you to remember?',
      })
      expect(followUp.status).toBe(403)
      expect(followUp.headers.get('x-service-error-code')).toBe('guardrail_blocked')
      const { error } = (await followUp.json()) as { error: { message: string } }
      expect(error.message).toContain('email filter matched in the stored conversation')
      expect(error.message).not.toContain(email)
      expect(gw.upstream.requests.length).toBe(sent)
      expect(await holdsEnded(gw, accountId)).toMatchObject({ heldNano: 0, inFlight: 0 })
    })

    /** A Messages request of `key` on a thread: `thread` is `create`, or the reply it continues. */
    const threadTurn = (
      key: string,
      thread: string,
      content: string,
      fields: Record<string, unknown> = {},
    ) =>
      post(
        '/v1/messages',
        key,
        {
          model: 'test/claude',
          max_tokens: 20,
          ...fields,
          thread:
            thread === 'create'
              ? { type: 'create' }
              : { type: 'continue', previous_message_id: thread },
          messages: [{ role: 'user', content }],
        },
        { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'message-threads-2026-08-12' },
      )
    const replyId = async (response: Response) => {
      expect(response.status).toBe(200)
      return ((await response.json()) as { id: string }).id
    }

    test('Messages: a block filter refuses a continue of a thread that holds the content, in the style of the Messages API', async () => {
      const { accountId, key } = await guarded([
        { detector: 'keywords', action: 'block', keywords: ['Falcon'], name: 'codenames' },
      ])
      const id = await replyId(
        await threadTurn(await unguardedKey(accountId), 'create', 'Status of Falcon?'),
      )
      const sent = gw.upstream.requests.length
      const continued = await threadTurn(key, id, 'And now?')
      expect(continued.status).toBe(403)
      const body = (await continued.json()) as {
        type: string
        error: { type: string; message: string }
      }
      expect(body.type).toBe('error')
      expect(body.error.type).toBe('permission_error')
      expect(body.error.message).toContain('codenames filter matched in the stored conversation')
      expect(gw.upstream.requests.length).toBe(sent)
      // A guardrail whose filters do not match lets the same follow-up through.
      const cleanId = await replyId(await threadTurn(key, 'create', 'Status of the launch?'))
      expect((await threadTurn(key, cleanId, 'And now?')).status).toBe(200)
    })

    for (const model of ['test/cheap', 'test/claude'])
      test(`Responses over ${model}: a stored turn another key sent reaches the provider redacted`, async () => {
        const { accountId, key } = await guarded([{ detector: 'email', action: 'redact' }])
        const first = await post('/v1/responses', await unguardedKey(accountId), {
          model,
          input: `Remember ${email}`,
        })
        const { id } = (await first.json()) as { id: string }
        expect(lastUpstreamBody()).toContain(email)
        const followUp = await post('/v1/responses', key, {
          model,
          previous_response_id: id,
          input: 'What did I ask you to remember?',
        })
        expect(followUp.status).toBe(200)
        expect(followUp.headers.get('x-service-guardrail-redactions')).toBe('email=1')
        const sent = lastUpstreamBody()
        expect(sent).toContain('Remember [REDACTED:email]')
        expect(sent).not.toContain(email)
      })

    test('Messages: a thread another key created reaches the provider redacted, its system prompt included', async () => {
      const { accountId, key } = await guarded([{ detector: 'email', action: 'redact' }])
      const id = await replyId(
        await threadTurn(await unguardedKey(accountId), 'create', `Write to ${email}`, {
          system: `Reply to ${email}`,
        }),
      )
      expect((await threadTurn(key, id, 'And now?')).status).toBe(200)
      const sent = gw.upstream.requests.at(-1)!.body as {
        system: string
        messages: { content: unknown }[]
      }
      expect(sent.system).toBe('Reply to [REDACTED:email]')
      expect(JSON.stringify(sent.messages[0]!.content)).toContain('Write to [REDACTED:email]')
      expect(JSON.stringify(sent)).not.toContain(email)
    })
  })

  test("Chat: a participant's name is inspected", async () => {
    const { key } = await guarded([{ detector: 'email', action: 'block' }])
    const response = await gw.chat(key, {
      model: 'test/cheap',
      messages: [{ role: 'user', name: email, content: 'hi' }],
    })
    expect(response.status).toBe(403)
  })

  describe('editing a guardrail takes effect at once', () => {
    test('a new filter applies on the next request', async () => {
      const { accountId, key, guardrailId } = await guarded([])
      expect(
        (await gw.chat(key, { model: 'test/cheap', messages: [{ role: 'user', content: email }] }))
          .status,
      ).toBe(200)
      const filters = gw.app.gateway.sql.json([{ detector: 'email', action: 'block' }] as never)
      await gw.app.gateway
        .sql`UPDATE guardrails SET filters = ${filters}, updated_at = clock_timestamp() WHERE id = ${guardrailId}`
      await gw.app.gateway.keys.invalidate({ accountId })
      expect(
        (await gw.chat(key, { model: 'test/cheap', messages: [{ role: 'user', content: email }] }))
          .status,
      ).toBe(403)
    })
  })
})
