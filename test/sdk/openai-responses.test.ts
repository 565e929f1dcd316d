// The official `openai` package reading Responses-style answers: refusals, reasoning, usage details, the
// status of items cut short, the gateway's own refusals of malformed requests, and stored responses.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import {
  anthropicTestModel,
  startTestGateway,
  testModel,
  type TestGateway,
} from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

const models = [
  testModel('openai/plain', 'fake?tokens=6'),
  anthropicTestModel('anthropic/plain', 'fake?tokens=6'),
]

describeWith('postgres', 'openai SDK over the Responses style', () => {
  let gw: TestGateway
  let client: OpenAI
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    const { apiUrl } = gw.app.listen()
    const key = (await gw.key(await gw.account('10'))).key
    client = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  const refusal = async (promise: Promise<unknown>) => {
    try {
      await promise
    } catch (caught) {
      return caught as InstanceType<typeof OpenAI.APIError>
    }
    throw new Error('expected an error')
  }

  describe('stored responses', () => {
    test('retrieving one as a stream is refused naming stream, not answered with JSON', async () => {
      const created = await client.responses.create({ model: 'openai/plain', input: 'hi' })
      const caught = await refusal(client.responses.retrieve(created.id, { stream: true }))
      expect(caught).toBeInstanceOf(OpenAI.BadRequestError)
      expect(caught.code).toBe('invalid_request')
      expect(caught.param).toBe('stream')
      expect(caught.message).toContain('stream')
      expect((await client.responses.retrieve(created.id)).id).toBe(created.id)
    })
  })
})
