/**
 * The Responses client style (`/v1/responses`). No provider speaks it here, so it is always translated.
 * Responses are stored unless the request says `store: false` (the style's own default), so that
 * `previous_response_id` follow-ups work over a provider of any style.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import type { Prompt } from '../../estimate.ts'
import type { AnswerPart } from '../../../core/neutral/answer.ts'
import type { Turn } from '../../../core/neutral/conversation.ts'
import { pdfDataUrlPages } from '../../../core/pdf-pages.ts'
import { chatErrorBody } from '../chat/render-error.ts'
import { setDefault } from '../../../policy/routing/presets.ts'
import type { AnswerContext, ClientStyle } from '../client-style.ts'
import { renderResponsesAnswer } from './answer.ts'
import { responsesEnvelope } from './envelope.ts'
import { responseId } from './output.ts'
import type { ResponseStore } from '../../../stores/stored-responses.ts'
import { responsesStreamOutput } from './stream.ts'
import { responsesTexts, responsesUsesTools, turnTexts } from './texts.ts'
import { inputTurns, responsesConversation } from './to-conversation.ts'

export function responsesStyle(store: ResponseStore): ClientStyle<ResponsesRequest> {
  const previous = new WeakMap<ResponsesRequest, Turn[]>()

  const remember = (
    context: AnswerContext<ResponsesRequest>,
    parts: AnswerPart[],
    response: Record<string, unknown>,
  ) => {
    if (context.body.store === false) return
    const input = inputTurns(context.body.input)
    if (input instanceof ServiceError) return
    const answer: Turn = {
      role: 'assistant',
      text: parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''),
      toolCalls: parts.flatMap((part) =>
        part.type === 'tool_call'
          ? [{ id: part.id, name: part.name, arguments: part.arguments }]
          : [],
      ),
    }
    // What this exchange adds to the stored conversation it follows up, kept under that one's ID.
    const earlier = previous.get(context.body)
    const parentId = context.body.previous_response_id
    store.save(
      responseId(context.requestId),
      context.accountId,
      'responses',
      [...input, answer],
      response,
      earlier && parentId ? { parentId, whole: () => [...earlier, ...input, answer] } : undefined,
    )
  }

  return {
    name: 'responses',
    envelope: responsesEnvelope,
    allowXApiKey: false,
    errorBody: chatErrorBody,
    headers: () => ({}),
    requested: (body) => ({
      model: body.model,
      fallbacks: body.models ?? [],
      stream: body.stream === true,
      outputTokens: body.max_output_tokens ?? undefined,
    }),
    fallbacksField: 'models',
    outputLimitField: 'max_output_tokens',
    // The style has no stop sequences; its output limit is at least 16.
    applyDefaults(body, params) {
      setDefault(body, 'temperature', params.temperature)
      setDefault(body, 'top_p', params.top_p)
      setDefault(
        body,
        'max_output_tokens',
        params.max_tokens === undefined ? undefined : Math.max(16, params.max_tokens),
      )
    },
    usesTools: responsesUsesTools,
    texts: responsesTexts,
    keptTexts: (body, visit) => turnTexts(previous.get(body) ?? [], visit),
    async prepare(body, accountId) {
      const id = body.previous_response_id
      if (!id) return undefined
      const turns = await storedTurns(store, id, accountId)
      if (turns instanceof ServiceError) return turns
      previous.set(body, turns)
      return undefined
    },
    measure: (body, bytes) => measureResponsesPrompt(body, bytes, previous.get(body) ?? []),
    conversation: (body) => responsesConversation(body, previous.get(body)),
    renderAnswer(answer, charged, context) {
      const response = renderResponsesAnswer(answer, charged, context)
      remember(context, answer.parts, response)
      return response
    },
    streamOutput: (context) =>
      responsesStreamOutput(context, (parts, response) => remember(context, parts, response)),
  }
}

/** Body bytes and the stored turns a follow-up carries, without image data. */
export function measureResponsesPrompt(
  body: ResponsesRequest,
  bytes: number,
  earlier: Turn[],
): Prompt {
  let images = 0
  let imageBytes = 0
  let pdfPages = 0
  const items = Array.isArray(body.input) ? (body.input as { content?: unknown }[]) : []
  for (const item of items) {
    for (const part of Array.isArray(item.content)
      ? (item.content as { type?: unknown; image_url?: unknown; file_data?: unknown }[])
      : []) {
      if (part?.type === 'input_file') pdfPages += pdfDataUrlPages(part.file_data)
      if (part?.type !== 'input_image') continue
      images += 1
      if (typeof part.image_url === 'string') imageBytes += part.image_url.length
    }
  }
  const earlierBytes = earlier.length > 0 ? JSON.stringify(earlier).length : 0
  return {
    textBytes: Math.max(0, bytes - imageBytes) + earlierBytes,
    images,
    pdfPages,
    messages: items.length + earlier.length + 1,
  }
}

/** The turns of the stored conversation `id` continues, or the refusal naming `previous_response_id`. */
export async function storedTurns(
  store: ResponseStore,
  id: string,
  accountId: string,
): Promise<Turn[] | ServiceError> {
  const turns = readTurns(await store.conversation(id, accountId, 'responses'))
  if (turns) return turns
  const kept =
    store.options.retentionDays === 0
      ? 'this gateway keeps no responses'
      : `responses are kept ${store.options.retentionDays} days, unless created with store: false`
  return new ServiceError(
    'invalid_request',
    `previous_response_id: no stored response ${id} (${kept})`,
    { param: 'previous_response_id' },
  )
}

/** A stored conversation as the style wrote it, the neutral turns of each exchange: the turns so far. */
function readTurns(parts: unknown[] | undefined): Turn[] | undefined {
  return parts?.every(Array.isArray) ? (parts as Turn[][]).flat() : undefined
}
