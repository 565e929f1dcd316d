// The demo model built into the gateway (`demo/echo`), as a newcomer meets it: it answers in every
// client style, streamed and not, with no provider key and no network, says it is a demo, costs nothing,
// and is listed as a demo in the catalog.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startTestGateway, testModel, type TestGateway } from '../helpers/gateway.ts'
import { describeWith } from '../helpers/services.ts'

const demo = testModel('demo/echo', 'echo', {
  name: 'Demo echo (built in; repeats your message, no model runs)',
  pricing: { inputPerMTok: 0, outputPerMTok: 0 },
  free: true,
  routes: [{ provider: 'demo', model: 'echo' }],
})

describeWith('postgres', 'the demo model', () => {
  let gw: TestGateway
  let openai: OpenAI
  let anthropic: Anthropic
  beforeAll(async () => {
    gw = await startTestGateway({ store: 'memory', database: 'postgres', models: [demo] })
    const { apiUrl } = gw.app.listen()
    // No credit at all: the demo is free.
    const { key } = await gw.key(await gw.account('0'))
    openai = new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: key, maxRetries: 0 })
    anthropic = new Anthropic({ baseURL: apiUrl, apiKey: key, maxRetries: 0 })
  })
  afterAll(() => gw.close())

  const saysDemo = (text: string, said: string) => {
    expect(text).toContain('demo/echo, a demo model built into the gateway')
    expect(text).toContain(`“${said}”`)
  }

  test('Chat Completions, not streamed: the answer says it is a demo, with usage and no cost', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse()
    saysDemo(data.choices[0]!.message.content!, 'Hello there')
    expect(data.choices[0]!.finish_reason).toBe('stop')
    expect(data.usage!.completion_tokens).toBeGreaterThan(10)
    expect((data.usage as unknown as { cost: number }).cost).toBe(0)
    expect(response.headers.get('x-service-model')).toBe('demo/echo')
    expect(response.headers.get('x-service-provider')).toBe('demo')
    expect(response.headers.get('x-service-cost-usd')).toBe('0')
    // Nothing went over the network to a provider.
    expect(gw.upstream.requests).toHaveLength(0)
  })

  test('Chat Completions, streamed: word by word, then the usage chunk and [DONE]', async () => {
    const stream = await openai.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'Stream this' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    const deltas: string[] = []
    let cost: number | undefined
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content
      if (content) deltas.push(content)
      if (chunk.usage) cost = (chunk.usage as unknown as { cost: number }).cost
    }
    expect(deltas.length).toBeGreaterThan(10)
    saysDemo(deltas.join(''), 'Stream this')
    expect(cost).toBe(0)
  })

  test('Messages and Responses answer too; the output limit is honoured', async () => {
    const message = await anthropic.messages
      .stream({
        model: 'demo/echo',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'From Claude code' }],
      })
      .finalMessage()
    saysDemo(
      message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
      'From Claude code',
    )
    const response = await openai.responses.create({
      model: 'demo/echo',
      input: 'From an agent',
      store: false,
    })
    saysDemo(response.output_text, 'From an agent')
    const short = await openai.chat.completions.create({
      model: 'demo/echo',
      messages: [{ role: 'user', content: 'Hello' }],
      max_completion_tokens: 3,
    })
    expect(short.choices[0]!.finish_reason).toBe('length')
    expect(short.usage!.completion_tokens).toBe(3)
  })

  test('the catalog lists it by a name that says it is a demo', async () => {
    const models = await openai.models.list()
    const listed = models.data.find((entry) => entry.id === 'demo/echo') as unknown as {
      display_name: string
    }
    expect(listed.display_name).toContain('Demo')
  })
})
