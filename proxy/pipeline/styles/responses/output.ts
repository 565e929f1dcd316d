/**
 * The Responses style's objects: the response (with its output items) as returned, streamed, stored and
 * retrieved. Item IDs derive from the request ID, so they are stable across a stream and a retrieval.
 */
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { TokenUsage } from '../../../core/catalog/pricing.ts'
import type { AnswerPart, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext } from '../client-style.ts'

export type OutputTextPart = { type: 'output_text'; text: string; annotations: []; logprobs: [] }
export type RefusalPart = { type: 'refusal'; refusal: string }
/** A message's content: its text, and the model's refusal apart from it. */
export type MessagePart = OutputTextPart | RefusalPart
export type MessageItem = {
  id: string
  type: 'message'
  role: 'assistant'
  status: 'in_progress' | 'completed' | 'incomplete'
  content: MessagePart[]
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

export function outputText(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] }
}

/** The content part of a text of the answer: a refusal, or output text. */
export function messagePart(text: string, refusal?: true): MessagePart {
  return refusal ? { type: 'refusal', refusal: text } : outputText(text)
}

/**
 * The output items of a whole answer: consecutive texts (the answer and a refusal) as the parts of one
 * message, each tool call an item; the last item ends as the answer did (see `lastItemStatus`).
 */
export function outputItems(
  parts: AnswerPart[],
  requestId: string,
  finish: FinishReason,
): OutputItem[] {
  const items: OutputItem[] = []
  for (const part of parts) {
    const last = items.at(-1)
    if (part.type === 'text' && last?.type === 'message')
      last.content.push(messagePart(part.text, part.refusal))
    else if (part.type === 'text')
      items.push({
        id: itemId('msg', requestId, items.length),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [messagePart(part.text, part.refusal)],
      })
    else
      items.push({
        id: itemId('fc', requestId, items.length),
        type: 'function_call',
        call_id: part.id,
        name: part.name,
        arguments: part.arguments,
        status: 'completed',
      })
  }
  const last = items.at(-1)
  if (last) last.status = lastItemStatus(finish)
  return items
}

/** The answer that output items hold, in neutral form (what a stored response keeps of a stream). */
export function itemParts(items: OutputItem[]): AnswerPart[] {
  return items.flatMap((item): AnswerPart[] =>
    item.type === 'message'
      ? item.content.map((part) =>
          part.type === 'refusal'
            ? { type: 'text', text: part.refusal, refusal: true }
            : { type: 'text', text: part.text },
        )
      : [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments }],
  )
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
