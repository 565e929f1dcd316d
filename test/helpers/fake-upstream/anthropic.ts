/** The fake provider's answers in the Anthropic Messages style (JSON and named stream events). */
import { fragments, type Plan } from './plan.ts'
import type { Step } from './openai.ts'

const stopReason = (plan: Plan) =>
  ({
    stop: 'end_turn',
    length: 'max_tokens',
    stop_sequence: 'stop_sequence',
    content_filter: 'refusal',
    tool_calls: 'tool_use',
  })[plan.finish]

function usage(plan: Plan) {
  const { prompt, completion, cached, cacheWrite, cacheWriteHour } = plan.usage
  return {
    input_tokens: prompt - cached - cacheWrite,
    output_tokens: completion,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: cacheWrite,
    cache_creation: {
      ephemeral_5m_input_tokens: cacheWrite - cacheWriteHour,
      ephemeral_1h_input_tokens: cacheWriteHour,
    },
  }
}

export function anthropicAnswer(plan: Plan): Record<string, unknown> {
  const content = [
    ...(plan.words.length > 0 ? [{ type: 'text', text: plan.words.join('') }] : []),
    ...plan.toolCalls.map((call) => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: JSON.parse(call.arguments || '{}'),
    })),
  ]
  return {
    id: `msg_${crypto.randomUUID().replaceAll('-', '')}`,
    type: 'message',
    role: 'assistant',
    model: `${plan.name}-2026`,
    content,
    stop_reason: stopReason(plan),
    stop_sequence: plan.finish === 'stop_sequence' ? '###' : null,
    ...(plan.report ? { usage: usage(plan) } : {}),
  }
}

export function anthropicStream(plan: Plan): Step[] {
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
  const full = usage(plan)
  const message = {
    id: `msg_${crypto.randomUUID().replaceAll('-', '')}`,
    type: 'message',
    role: 'assistant',
    model: `${plan.name}-2026`,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  }
  const steps: Step[] = [
    {
      text: event('message_start', {
        message: { ...message, usage: plan.report ? { ...full, output_tokens: 1 } : {} },
      }),
      content: false,
    },
    { text: event('ping', {}), content: false },
  ]
  let index = 0
  if (plan.words.length > 0) {
    steps.push({
      text: event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
      content: false,
    })
    for (const word of plan.words)
      steps.push({
        text: event('content_block_delta', { index, delta: { type: 'text_delta', text: word } }),
        content: true,
      })
    steps.push({ text: event('content_block_stop', { index }), content: false })
    index += 1
  }
  for (const call of plan.toolCalls) {
    steps.push({
      text: event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
      content: true,
    })
    const parts = fragments(call.arguments, Number(plan.options.get('argsChunks') ?? 3))
    for (const part of parts.length > 0 ? parts : ['']) {
      steps.push({
        text: event('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: part },
        }),
        content: true,
      })
    }
    steps.push({ text: event('content_block_stop', { index }), content: false })
    index += 1
  }
  const delta = {
    stop_reason: stopReason(plan),
    stop_sequence: plan.finish === 'stop_sequence' ? '###' : null,
  }
  steps.push({
    text: event('message_delta', {
      delta,
      usage: plan.report ? { output_tokens: full.output_tokens } : {},
    }),
    content: false,
  })
  steps.push({ text: event('message_stop', {}), content: false })
  return steps
}

export const anthropicError = (status: number, type: string | null) => ({
  type: 'error',
  error: {
    type:
      type ??
      (status === 429
        ? 'rate_limit_error'
        : status === 529
          ? 'overloaded_error'
          : status >= 500
            ? 'api_error'
            : 'invalid_request_error'),
    message: `fake failure ${status}`,
  },
})
export const anthropicStreamError = () =>
  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'fake overload' } })}\n\n`
