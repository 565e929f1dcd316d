// A provider that takes no key (a local OpenAI-compatible server: Ollama, llama.cpp, vLLM) serves
// without one, and is sent no Authorization header.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestGateway, testModel, type TestGateway } from '../../helpers/gateway.ts'
import { describeWith } from '../../helpers/services.ts'

const models = [
  testModel('local/llama', 'llama3.1:8b', {
    routes: [{ provider: 'keyless', model: 'llama3.1:8b' }],
  }),
]

describeWith('postgres', 'a provider without a key', () => {
  let gw: TestGateway
  let key: string
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models })
    key = (await gw.key(await gw.account('1'))).key
  })
  afterAll(() => gw.close())

  test('its models answer, and the provider gets no Authorization header', async () => {
    const response = await gw.chat(key, {
      model: 'local/llama',
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-service-provider')).toBe('keyless')
    const sent = gw.upstream.requests.at(-1)!
    expect(sent.body.model).toBe('llama3.1:8b')
    expect(sent.headers.authorization).toBeUndefined()
  })
})
