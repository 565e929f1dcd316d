/** A Messages-style answer read back: checked, its content blocks in neutral form, its usage. */
import { ServiceError } from '../../../shared/errors.ts'
import type { AnswerPart } from '../../translate/answer.ts'
import type { TokenUsage } from '../../catalog/pricing.ts'
import type { AnswerRead } from '../adapter.ts'
import { finishFromStopReason } from './stop-reason.ts'
import { readMessagesUsage } from './usage.ts'

type Block = { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }

export function readMessagesAnswer(text: string): AnswerRead {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return invalid('the body is not JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return invalid('the body is not a JSON object')
  const body = json as Record<string, unknown>
  const usage = readMessagesUsage(body.usage)
  if (!Array.isArray(body.content)) return invalid('content is missing', usage)
  const parts: AnswerPart[] = []
  for (const block of body.content as Block[]) {
    if (block?.type === 'text' && typeof block.text === 'string') {
      const last = parts.at(-1)
      if (last?.type === 'text') last.text += block.text
      else parts.push({ type: 'text', text: block.text })
    } else if (block?.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string') return invalid('a tool_use block has no id or name', usage)
      parts.push({ type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
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

function invalid(check: string, usage?: TokenUsage): AnswerRead {
  return { ok: false, error: new ServiceError('upstream_response_invalid', `The provider's response failed validation: ${check}.`), usage }
}
