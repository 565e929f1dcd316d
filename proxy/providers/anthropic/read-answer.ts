/** A Messages-style answer read back: checked, its content blocks in neutral form, its usage. */
import type { AnswerPart } from '../../core/neutral/answer.ts'
import type { AnswerRead } from '../adapter.ts'
import { invalidAnswer, parseAnswerBody } from '../answer-body.ts'
import { finishFromStopReason } from './stop-reason.ts'
import { readMessagesUsage } from './usage.ts'

type Block = { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }

export function readMessagesAnswer(text: string): AnswerRead {
  const parsed = parseAnswerBody(text)
  if (!('body' in parsed)) return parsed
  const body = parsed.body
  const usage = readMessagesUsage(body.usage)
  if (!Array.isArray(body.content)) return invalidAnswer('content is missing', usage)
  const parts: AnswerPart[] = []
  for (const block of body.content as Block[]) {
    if (block?.type === 'text' && typeof block.text === 'string') {
      const last = parts.at(-1)
      if (last?.type === 'text') last.text += block.text
      else parts.push({ type: 'text', text: block.text })
    } else if (block?.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string')
        return invalidAnswer('a tool_use block has no id or name', usage)
      parts.push({
        type: 'tool_call',
        id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
      })
    }
  }
  return {
    ok: true,
    json: body,
    answer: {
      model: typeof body.model === 'string' ? body.model : '',
      parts,
      finish: finishFromStopReason(body.stop_reason),
      stopSequence: typeof body.stop_sequence === 'string' ? body.stop_sequence : null,
      usage,
    },
  }
}
