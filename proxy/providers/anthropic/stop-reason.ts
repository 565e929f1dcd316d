/** Messages-style `stop_reason` to neutral form and back (the table in WIRE §5). */
import type { FinishReason } from '../../core/neutral/answer.ts'

export function finishFromStopReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length'
    case 'tool_use':
      return 'tool_calls'
    case 'refusal':
      return 'content_filter'
    case 'stop_sequence':
      return 'stop_sequence'
    default:
      return 'stop'
  }
}

export function stopReasonFromFinish(finish: FinishReason): string {
  switch (finish) {
    case 'length':
      return 'max_tokens'
    case 'tool_calls':
      return 'tool_use'
    case 'content_filter':
      return 'refusal'
    case 'stop_sequence':
      return 'stop_sequence'
    case 'stop':
      return 'end_turn'
  }
}
