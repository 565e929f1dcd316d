// POST /v1/responses/input_tokens through the official `openai` SDK (`responses.inputTokens.count`): the
// model's tokenizer over what the request would send, the stored conversation it continues included,
// never a charge or a provider call; its refusals in the style's error shape.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { loadTokenizer } from '../../../../proxy/core/catalog/tokenizers.ts'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../../../helpers/gateway.ts'
import { describeWith, uniqueName } from '../../../helpers/services.ts'
import { rejection } from '../../../helpers/settle.ts'

const models = [
  testModel('openai/plain', 'fake?tokens=4'),
  testModel('openai/cl100k', 'fake', { tokenizer: 'cl100k_base' }),
  anthropicTestModel('anthropic/plain', 'fake?tokens=4'),
]
/** Framing the holds allow per message: each input item's, and one more (a text input's own). */
const MESSAGE_TOKENS = 8

describeWith('postgres', 'POST /v1/responses/input_tokens', () => {
  let gw: TestGateway
  let accountId: string
  let client: OpenAI
  let o200k: (text: string) => number
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    accountId = await gw.account('1')
    client = new OpenAI({
      baseURL: `${apiUrl}/v1`,
      apiKey: (await gw.key(accountId)).key,
      maxRetries: 0,
    })
    o200k = await loadTokenizer('o200k_base')
  })
  afterAll(() => gw.close())

  test('the instructions, the input and the tools are counted, by the model’s tokenizer; nothing is sent or charged', async () => {
    const tool = {
      type: 'function' as const,
      name: 'look',
      description: 'Look around',
      parameters: { type: 'object', properties: {} },
      strict: false,
    }
    const sent = gw.upstream.requests.length
    const { data, response } = await client.responses.inputTokens
      .count({
        model: 'openai/plain',
        instructions: 'Be brief.',
        input: [{ role: 'user', content: 'How tall is the tower?' }],
        tools: [tool],
      })
      .withResponse()
    expect(data).toEqual({
      object: 'response.input_tokens',
      input_tokens:
        o200k('Be brief.') +
        o200k('How tall is the tower?') +
        o200k(JSON.stringify([tool])) +
        2 * MESSAGE_TOKENS,
    })
    expect(response.headers.get('x-service-cost-usd')).toBe('0')
    expect(gw.upstream.requests.length).toBe(sent)
    const cl100k = await loadTokenizer('cl100k_base')
    const other = await client.responses.inputTokens.count({
      model: 'openai/cl100k',
      input: 'How tall is the tower?',
    })
    expect(other.input_tokens).toBe(cl100k('How tall is the tower?') + MESSAGE_TOKENS)
    // Without a model, the common tokenizer counts.
    expect((await client.responses.inputTokens.count({ input: 'Hi' })).input_tokens).toBe(
      o200k('Hi') + MESSAGE_TOKENS,
    )
  })

  test('a follow-up counts the stored conversation it continues', async () => {
    const first = await client.responses.create({ model: 'anthropic/plain', input: 'Hello there' })
    const answer = first.output_text
    const counted = await client.responses.inputTokens.count({
      model: 'anthropic/plain',
      previous_response_id: first.id,
      input: 'And then?',
    })
    const alone = await client.responses.inputTokens.count({
      model: 'anthropic/plain',
      input: 'And then?',
    })
    expect(counted.input_tokens - alone.input_tokens).toBe(
      o200k('Hello there') + o200k(answer) + 2 * MESSAGE_TOKENS,
    )
    const missing = await rejection(
      client.responses.inputTokens.count({
        model: 'anthropic/plain',
        previous_response_id: 'resp_none',
      }),
    )
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError)
    expect((missing as InstanceType<typeof OpenAI.APIError>).param).toBe('previous_response_id')
  })

  describe('refusals', () => {
    const code = async (promise: Promise<unknown>) =>
      ((await rejection(promise)) as InstanceType<typeof OpenAI.APIError>).code

    test('an unknown model, a field of no count and input no provider here takes, each by name', async () => {
      expect(
        await code(client.responses.inputTokens.count({ model: 'nobody/nothing', input: 'x' })),
      ).toBe('unknown_model')
      const extra = await rejection(
        client.responses.inputTokens.count({
          model: 'openai/plain',
          input: 'x',
          stream: true,
        } as never),
      )
      expect(extra).toBeInstanceOf(OpenAI.BadRequestError)
      expect((extra as InstanceType<typeof OpenAI.APIError>).param).toBe('stream')
      const byId = await rejection(
        client.responses.inputTokens.count({
          model: 'openai/plain',
          input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }],
        }),
      )
      expect((byId as InstanceType<typeof OpenAI.APIError>).param).toBe(
        'input[0].content[0].file_data',
      )
    })

    test('the key’s guardrail applies: a block refuses', async () => {
      const guarded = await gw.key(accountId)
      const id = uniqueName('gr_')
      const { sql } = gw.app.gateway
      await sql`INSERT INTO guardrails (id, account_id, name, filters) VALUES (${id}, ${accountId}, ${id}, ${sql.json([{ detector: 'email', action: 'block' }] as never)})`
      await sql`UPDATE api_keys SET guardrail_id = ${id} WHERE id = ${guarded.id}`
      await gw.app.gateway.keys.invalidate({ accountId })
      const blocked = new OpenAI({ baseURL: client.baseURL, apiKey: guarded.key, maxRetries: 0 })
      expect(
        await code(
          blocked.responses.inputTokens.count({
            model: 'openai/plain',
            input: 'write to jane@example.com',
          }),
        ),
      ).toBe('guardrail_blocked')
    })
  })
})
