import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'bun:test'
import { fieldName, envelope, validate } from '../../../proxy/pipeline/validate.ts'
import { ChatRequest, chatRequestFields } from '../../../shared/schemas/chat.ts'
import { MessagesRequest, messagesRequestFields } from '../../../shared/schemas/messages.ts'
import { USD_AMOUNT_PATTERN } from '../../../shared/money.ts'
import { chatEnvelope } from '../../../proxy/pipeline/styles/chat/envelope.ts'
import { responsesEnvelope } from '../../../proxy/pipeline/styles/responses/envelope.ts'

const chat = envelope(ChatRequest, chatRequestFields)
const message = (body: unknown) => {
  const result = validate(body as Record<string, unknown>, chat)
  return result.ok ? 'ok' : result.error.message
}
const user = [{ role: 'user', content: 'hi' }]

describe('request envelope', () => {
  test('field paths read as the client wrote them', () => {
    expect(fieldName('/messages/0/content/2/text')).toBe('messages[0].content[2].text')
    expect(fieldName('/model')).toBe('model')
  })

  test('each problem names its field', () => {
    expect(message({ messages: user })).toBe('model: is required')
    expect(message({ model: 'a/b' })).toBe('messages: is required')
    expect(message({ model: 'a/b', messages: [] })).toBe('messages: must be a non-empty array')
    expect(message({ model: 'a/b', messages: 'hi' })).toBe('messages: must be an array')
    expect(message({ model: 'a/b', messages: [{ content: 'x' }] })).toBe(
      'messages[0].role: is required',
    )
    expect(message({ model: 'a/b', messages: [{ role: 'user', content: 7 }] })).toBe(
      'messages[0].content: must be a string or an array or null',
    )
    expect(message({ model: 'a/b', messages: user, max_tokens: 0 })).toBe(
      'max_tokens: must be an integer of at least 1 or null',
    )
    expect(message({ model: 'a/b', messages: user, models: ['a/b', 'a/c', 'a/d', 'a/e'] })).toBe(
      'models: must have at most 3 items',
    )
    expect(message({ model: 'a/b', messages: user, stream: 'yes' })).toBe(
      'stream: must be a boolean or null',
    )
  })

  test('a choice among fixed values names the values', () => {
    const reason = envelope(
      Type.Object({ reason: Type.Union([Type.Literal('abuse'), Type.Literal('operator')]) }),
      new Set(['reason']),
    )
    const result = validate({ reason: 'fun' }, reason)
    expect(result.ok ? 'ok' : result.error.message).toBe('reason: must be "abuse" or "operator"')
  })

  test('a string of the wrong form says the form it must have', () => {
    const threshold = envelope(
      Type.Object({
        thresholdUsd: Type.Union([Type.String({ pattern: USD_AMOUNT_PATTERN }), Type.Null()]),
      }),
      new Set(['thresholdUsd']),
    )
    const problem = (value: unknown) => {
      const result = validate({ thresholdUsd: value }, threshold)
      return result.ok ? 'ok' : result.error.message
    }
    expect(problem('five')).toBe('thresholdUsd: must be an amount in USD, such as 5 or 2.50')
    expect(problem('-1')).toBe('thresholdUsd: must be an amount in USD, such as 5 or 2.50')
    expect(problem(5)).toBe('thresholdUsd: must be a string or null')
    expect(problem('2.50')).toBe('ok')
  })

  test('sampling and output options of the wrong type are refused by name; null passes', () => {
    const refusal = (body: Record<string, unknown>) => {
      const result = validate({ model: 'a/b', messages: user, ...body }, chat)
      return result.ok ? 'ok' : { message: result.error.message, param: result.error.details.param }
    }
    const numbers = ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty']
    for (const field of numbers) {
      expect(refusal({ [field]: 'hot' })).toEqual({
        message: `${field}: must be a number or null`,
        param: field,
      })
      expect(refusal({ [field]: 0.5 })).toBe('ok')
    }
    for (const field of ['seed', 'top_logprobs', 'max_completion_tokens', 'n']) {
      expect(refusal({ [field]: '3' })).toMatchObject({ param: field })
      expect(refusal({ [field]: 1.5 })).toMatchObject({ param: field })
    }
    expect(refusal({ seed: 1.5 })).toEqual({
      message: 'seed: must be an integer or null',
      param: 'seed',
    })
    for (const field of ['logprobs', 'parallel_tool_calls', 'store']) {
      expect(refusal({ [field]: 'true' })).toEqual({
        message: `${field}: must be a boolean or null`,
        param: field,
      })
      expect(refusal({ [field]: true })).toBe('ok')
    }
    const nulls = [...numbers, 'seed', 'top_logprobs', 'logprobs', 'parallel_tool_calls', 'store']
    expect(refusal(Object.fromEntries(nulls.map((field) => [field, null])))).toBe('ok')
  })

  test('options another provider style maps or refuses, of the wrong type, are refused by name', () => {
    const refusal = (body: Record<string, unknown>) => {
      const result = validate({ model: 'a/b', messages: user, ...body }, chat)
      return result.ok ? 'ok' : { message: result.error.message, param: result.error.details.param }
    }
    for (const field of ['user', 'safety_identifier', 'reasoning_effort', 'service_tier']) {
      expect(refusal({ [field]: 5 })).toEqual({
        message: `${field}: must be a string or null`,
        param: field,
      })
      expect(refusal({ [field]: 'x' })).toBe('ok')
    }
    for (const field of ['metadata', 'prediction', 'web_search_options', 'response_format']) {
      expect(refusal({ [field]: 'x' })).toEqual({
        message: `${field}: must be an object or null`,
        param: field,
      })
    }
    expect(refusal({ response_format: {} })).toMatchObject({ param: 'response_format.type' })
    expect(refusal({ stop: 5 })).toMatchObject({ param: 'stop' })
    expect(refusal({ stop: ['###', 5] })).toEqual({
      message: 'stop[1]: must be a string',
      param: 'stop[1]',
    })
    expect(refusal({ modalities: 'audio' })).toMatchObject({ param: 'modalities' })
    expect(refusal({ tools: 'x' })).toMatchObject({ param: 'tools' })
    expect(refusal({ tools: [5] })).toMatchObject({ param: 'tools[0]' })
    expect(
      refusal({
        stop: 'x',
        metadata: { a: 'b' },
        response_format: { type: 'json_object' },
        modalities: ['text'],
        prediction: { type: 'content', content: 'x' },
        tools: [{ type: 'function', function: { name: 'f' } }],
      }),
    ).toBe('ok')
    const nullable = ['stop', 'user', 'metadata', 'response_format', 'tools', 'modalities']
    expect(refusal(Object.fromEntries(nullable.map((field) => [field, null])))).toBe('ok')
  })

  test('a wrong element inside a list of blocks is named by its own index', () => {
    const messages = envelope(MessagesRequest, messagesRequestFields)
    const result = validate(
      {
        model: 'a/b',
        max_tokens: 10,
        messages: [{ role: 'user', content: [{ type: 'text' }, 5] }],
      },
      messages,
    )
    expect(result.ok ? 'ok' : result.error.message).toBe(
      'messages[0].content[1]: must be an object',
    )
    expect(result.ok ? 'ok' : result.error.details.param).toBe('messages[0].content[1]')
  })

  test('Messages sampling and tool options of the wrong type are refused by name', () => {
    const messages = envelope(MessagesRequest, messagesRequestFields)
    const refusal = (body: Record<string, unknown>) => {
      const result = validate({ model: 'a/b', max_tokens: 10, messages: user, ...body }, messages)
      return result.ok ? 'ok' : { message: result.error.message, param: result.error.details.param }
    }
    for (const field of ['temperature', 'top_p']) {
      expect(refusal({ [field]: '0.5' })).toEqual({
        message: `${field}: must be a number or null`,
        param: field,
      })
      expect(refusal({ [field]: 0.5 })).toBe('ok')
    }
    expect(refusal({ top_k: 1.5 })).toEqual({
      message: 'top_k: must be an integer or null',
      param: 'top_k',
    })
    expect(refusal({ tool_choice: 'auto' })).toMatchObject({ param: 'tool_choice' })
    expect(refusal({ thinking: true })).toMatchObject({ param: 'thinking' })
    expect(refusal({ metadata: 'user-1' })).toMatchObject({ param: 'metadata' })
    expect(
      refusal({
        top_k: 40,
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        metadata: { user_id: 'user-1' },
      }),
    ).toBe('ok')
  })

  test('what the SDK types allow passes: stream null, an assistant message given by its refusal or audio', () => {
    const problem = (body: Record<string, unknown>) => {
      const result = validate({ model: 'a/b', messages: user, ...body }, chatEnvelope)
      return result.ok ? 'ok' : result.error.message
    }
    expect(problem({ stream: null })).toBe('ok')
    expect(problem({ stream: null, stream_options: null })).toBe('ok')
    const after = (message: Record<string, unknown>) =>
      problem({ messages: [...user, { role: 'assistant', ...message }, ...user] })
    expect(after({ refusal: 'I cannot help with that.' })).toBe('ok')
    expect(after({ audio: { id: 'audio_1' } })).toBe('ok')
    expect(after({ name: 'a' })).toBe('messages[1].content: is required')
  })

  test('Messages fields of the current SDKs pass: no output, toolsets without a name, output and cache options', () => {
    const messages = envelope(MessagesRequest, messagesRequestFields)
    const problem = (body: Record<string, unknown>) => {
      const result = validate({ model: 'a/b', max_tokens: 10, messages: user, ...body }, messages)
      return result.ok ? 'ok' : result.error.message
    }
    expect(problem({ max_tokens: 0 })).toBe('ok')
    expect(problem({ max_tokens: -1 })).toBe('max_tokens: must be at least 0')
    expect(
      problem({
        tools: [{ type: 'browser_toolset_20260801' }, { type: 'computer_toolset_20260801' }],
      }),
    ).toBe('ok')
    expect(problem({ tools: [{ name: '' }] })).toBe('tools[0].name: must not be empty')
    expect(
      problem({
        cache_control: { type: 'ephemeral', ttl: '1h' },
        diagnostics: { previous_message_id: null },
        inference_geo: 'us',
        output_config: { effort: 'high', format: { type: 'json_schema', schema: {} } },
        speed: 'fast',
      }),
    ).toBe('ok')
  })

  test('Responses fields of the current SDK pass: access programs and image options', () => {
    const result = validate(
      {
        model: 'a/b',
        input: 'hi',
        access_programs: { cyber: 'standard' },
        image: { context_compression: 'enabled' },
      },
      responsesEnvelope,
    )
    expect(result.ok ? 'ok' : result.error.message).toBe('ok')
  })

  test('fields outside the style are refused by name; the style’s own pass', () => {
    expect(message({ model: 'a/b', messages: user, top_k: 3 })).toBe(
      'Unrecognized request argument supplied: top_k',
    )
    expect(
      message({
        model: 'a/b',
        messages: user,
        temperature: 0.2,
        seed: 1,
        response_format: { type: 'json_object' },
        tools: [],
      }),
    ).toBe('ok')
  })
})
