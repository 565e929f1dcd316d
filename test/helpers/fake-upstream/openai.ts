/** The fake provider's answers in the OpenAI Chat Completions style (JSON and stream events). */
import { fragments, type Plan } from './plan.ts'

export type Step = { text: string; content: boolean }

const refusal = (plan: Plan) => plan.options.has('refusal')
const finishReason = (plan: Plan) => (plan.finish === 'stop_sequence' ? 'stop' : plan.finish)

function usage(plan: Plan) {
  const { prompt, completion, cached, reasoning } = plan.usage
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
    ...(plan.options.has('reasoning')
      ? { completion_tokens_details: { reasoning_tokens: reasoning } }
      : {}),
  }
}

export function openaiAnswer(plan: Plan): Record<string, unknown> {
  const toolCalls = plan.toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments || '{}' },
  }))
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: `${plan.name}-2026`,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls.length > 0 || refusal(plan) ? null : plan.words.join(''),
          refusal: refusal(plan) ? plan.words.join('') : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(plan),
      },
    ],
    ...(plan.report ? { usage: usage(plan) } : {}),
  }
}

export function openaiStream(plan: Plan, includeUsage: boolean): Step[] {
  const base = {
    id: `chatcmpl-${crypto.randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: `${plan.name}-2026`,
  }
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`
  const delta = (value: object, finish: string | null = null) =>
    chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }])
  const steps: Step[] = [{ text: delta({ role: 'assistant', content: '' }), content: false }]
  for (const word of plan.words)
    steps.push({
      text: delta(refusal(plan) ? { refusal: word } : { content: word }),
      content: true,
    })
  const start = (call: Plan['toolCalls'][number], index: number) =>
    steps.push({
      text: delta({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
      content: true,
    })
  const parts = (call: Plan['toolCalls'][number]) =>
    fragments(call.arguments, Number(plan.options.get('argsChunks') ?? 3))
  const argument = (index: number, part: string) =>
    steps.push({
      text: delta({ tool_calls: [{ index, function: { arguments: part } }] }),
      content: true,
    })
  if (plan.options.has('wholeCalls') && plan.toolCalls.length > 0) {
    // As some OpenAI-compatible servers stream tool calls: all whole in one delta, without `index`.
    steps.push({
      text: delta({
        tool_calls: plan.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      }),
      content: true,
    })
  } else if (plan.options.has('interleave')) {
    // As some OpenAI-compatible servers stream parallel calls: every call starts, then their
    // argument fragments take turns.
    // With interleave=2 a call starts only with its first fragment, after the previous call's.
    const startsFirst = plan.options.get('interleave') !== '2'
    if (startsFirst) plan.toolCalls.forEach(start)
    const all = plan.toolCalls.map(parts)
    for (let at = 0; at < Math.max(0, ...all.map((list) => list.length)); at++)
      all.forEach((list, index) => {
        if (at === 0 && !startsFirst) start(plan.toolCalls[index]!, index)
        if (list[at] !== undefined) argument(index, list[at]!)
      })
  } else
    plan.toolCalls.forEach((call, index) => {
      start(call, index)
      for (const part of parts(call)) argument(index, part)
    })
  steps.push({ text: delta({}, finishReason(plan)), content: false })
  if (includeUsage && plan.report)
    steps.push({ text: chunk([], { usage: usage(plan) }), content: false })
  steps.push({ text: 'data: [DONE]\n\n', content: false })
  return steps
}

export const openaiError = (status: number, code: string | null) => ({
  error: { message: `fake failure ${status}`, type: 'server_error', code },
})
export const openaiStreamError = () =>
  `data: ${JSON.stringify({ error: { message: 'fake overload', type: 'server_error' } })}\n\n`
