/**
 * The Responses style's objects: the response (with its output items) as returned, streamed, stored and
 * retrieved. Item IDs derive from the request ID, so they are stable across a stream and a retrieval.
 */
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { TokenUsage } from '../../../core/catalog/pricing.ts'
import type { AnswerPart, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext } from '../client-style.ts'

export type MessageItem = {
  id: string
  type: 'message'
  role: 'assistant'
  status: 'in_progress' | 'completed' | 'incomplete'
  content: { type: 'output_text'; text: string; annotations: []; logprobs: [] }[]
}
export type FunctionCallItem = {
  id: string
  type: 'function_call'
  call_id: string
  name: string
  arguments: string
  status: 'in_progress' | 'completed' | 'incomplete'
}
export type OutputItem = MessageItem | FunctionCallItem

export type Status = 'in_progress' | 'completed' | 'incomplete' | 'failed'

export const responseId = (requestId: string) => `resp_${requestId.slice(4)}`
export const itemId = (prefix: 'msg' | 'fc', requestId: string, index: number) =>
  `${prefix}_${requestId.slice(4)}${index}`

export function outputText(text: string): MessageItem['content'][number] {
  return { type: 'output_text', text, annotations: [], logprobs: [] }
}

/** The output items of a whole answer; the last one ends as the answer did (see `lastItemStatus`). */
export function outputItems(
  parts: AnswerPart[],
  requestId: string,
  finish: FinishReason,
): OutputItem[] {
  return parts.map((part, index) => {
    const status = index === parts.length - 1 ? lastItemStatus(finish) : 'completed'
    return part.type === 'text'
      ? {
          id: itemId('msg', requestId, index),
          type: 'message',
          role: 'assistant',
          status,
          content: [outputText(part.text)],
        }
      : {
          id: itemId('fc', requestId, index),
          type: 'function_call',
          call_id: part.id,
          name: part.name,
          arguments: part.arguments,
          status,
        }
  })
}

/**
 * The status of the item an answer ends in: incomplete when the output limit or a filter cut it short,
 * as the response is. The items before it were finished and are completed.
 */
export function lastItemStatus(finish: FinishReason): OutputItem['status'] {
  return finalStatus(finish).status === 'completed' ? 'completed' : 'incomplete'
}

/** The response's status for a finish reason: length and content filter leave it incomplete. */
export function finalStatus(finish: FinishReason): {
  status: Status
  incomplete: { reason: string } | null
} {
  if (finish === 'length')
    return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } }
  if (finish === 'content_filter')
    return { status: 'incomplete', incomplete: { reason: 'content_filter' } }
  return { status: 'completed', incomplete: null }
}

export function responsesUsage(usage: TokenUsage, costUsd: number): Record<string, unknown> {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheWriteTokens,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
    cost: costUsd,
  }
}

export type ResponseState = {
  status: Status
  model: string
  output: OutputItem[]
  usage?: Record<string, unknown>
  incomplete?: { reason: string } | null
}

/** The response object, echoing the request's settings as the style does. */
export function responseObject(
  context: AnswerContext<ResponsesRequest>,
  state: ResponseState,
): Record<string, unknown> {
  const body = context.body as ResponsesRequest & Record<string, unknown>
  return {
    id: responseId(context.requestId),
    object: 'response',
    created_at: context.created,
    status: state.status,
    error: null,
    incomplete_details: state.incomplete ?? null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: state.model,
    output: state.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: reasoningEcho(body.reasoning),
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: state.usage ?? null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  }
}

/** The request's reasoning settings as the response states them (null when it set none). */
function reasoningEcho(reasoning: unknown): Record<string, unknown> | null {
  if (typeof reasoning !== 'object' || reasoning === null) return null
  return { effort: null, summary: null, ...reasoning }
}
