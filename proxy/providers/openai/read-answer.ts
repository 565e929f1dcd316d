/**
 * A Chat Completions answer read back: checked for the shape clients rely on, its first choice in
 * neutral form, its usage.
 */
import type { AnswerPart, FinishReason } from '../../core/neutral/answer.ts'
import type { AnswerRead } from '../adapter.ts'
import { invalidAnswer, parseAnswerBody } from '../answer-body.ts'
import { readChatUsage } from './usage.ts'

type Choice = {
  message?: {
    content?: unknown
    refusal?: unknown
    tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[]
  }
  finish_reason?: unknown
}

export function readChatAnswer(text: string): AnswerRead {
  const parsed = parseAnswerBody(text)
  if (!('body' in parsed)) return parsed
  const body = parsed.body
  const usage = readChatUsage(body.usage)
  if (!Array.isArray(body.choices)) return invalidAnswer('choices is missing', usage)
  const choices = body.choices as Choice[]
  if (
    choices.some(
      (choice) =>
        typeof choice !== 'object' ||
        choice === null ||
        typeof choice.message !== 'object' ||
        choice.message === null,
    )
  ) {
    return invalidAnswer('a choice has no message', usage)
  }
  const first = choices[0]
  const parts: AnswerPart[] = []
  const { content, refusal } = first?.message ?? {}
  if (typeof content === 'string' && content !== '') parts.push({ type: 'text', text: content })
  if (typeof refusal === 'string' && refusal !== '')
    parts.push({ type: 'text', text: refusal, refusal: true })
  for (const call of first?.message?.tool_calls ?? []) {
    if (typeof call.id !== 'string' || typeof call.function?.name !== 'string')
      return invalidAnswer('a tool call has no id or name', usage)
    parts.push({
      type: 'tool_call',
      id: call.id,
      name: call.function.name,
      // Some OpenAI-compatible servers send a call without arguments as "": clients parse a JSON object.
      arguments:
        typeof call.function.arguments === 'string' && call.function.arguments !== ''
          ? call.function.arguments
          : '{}',
    })
  }
  return {
    ok: true,
    json: body,
    answer: {
      model: typeof body.model === 'string' ? body.model : '',
      parts,
      finish: chatFinish(
        first?.finish_reason,
        parts.some((part) => part.type === 'tool_call'),
      ),
      stopSequence: null,
      usage,
    },
  }
}

/**
 * `finish_reason` in neutral form; a legacy `function_call` is a tool call, and so is a `stop` with
 * tool calls (`withToolCalls`), which some OpenAI-compatible servers send: a client of another style
 * would take it for the end of the turn and not run the calls.
 */
export function chatFinish(reason: unknown, withToolCalls = false): FinishReason {
  switch (reason) {
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls'
    case 'content_filter':
      return 'content_filter'
    default:
      return withToolCalls ? 'tool_calls' : 'stop'
  }
}
