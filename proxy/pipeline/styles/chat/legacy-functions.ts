/**
 * Legacy function calling in the Chat Completions style (`functions`, `function_call`, `role: "function"`):
 * deprecated, still in the API and still sent by older clients. A request that offers `functions` (and no
 * `tools`) is answered as the API answers it: one call in `message.function_call` (streamed as
 * `delta.function_call`) with finish reason `function_call`. Its calls carry no ID, so a provider that
 * needs one gets an ID made from the call's position and name, which its result can name again.
 */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'

export function usesLegacyFunctions(body: ChatRequest): boolean {
  const raw = body as { functions?: unknown; tools?: unknown }
  return (
    Array.isArray(raw.functions) &&
    raw.functions.length > 0 &&
    !(Array.isArray(raw.tools) && raw.tools.length > 0)
  )
}

/** The ID of the function call made in `messages[index]`. */
export function legacyCallId(index: number, name: string): string {
  return `call_${index}_${name}`
}

/** The finish reason a legacy client expects for a tool call. */
export function legacyFinishReason(finish: string): string {
  return finish === 'tool_calls' ? 'function_call' : finish
}
