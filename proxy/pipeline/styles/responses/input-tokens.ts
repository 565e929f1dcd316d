/**
 * `POST /v1/responses/input_tokens` (the SDK's `responses.inputTokens.count`): the input tokens of a
 * Responses request, free and never charged. Its stages, in order:
 *
 * 1. ceiling and key, as every key endpoint (503 `overloaded`; 401 / 403)
 * 2. body: 32 MB, JSON, depth; the style's fields of a count, each optional (400 naming the field); the
 *    input as a request would be translated (what no provider here can take is refused by field)
 * 3. model, when named: preset, alias, `service/auto` and access, as a model request resolves them (404,
 *    403, 503); the first candidate's tokenizer counts
 * 4. the stored conversation `previous_response_id` continues (400 when there is none)
 * 5. guardrails: a block refuses (403 `guardrail_blocked`)
 * 6. count: the tokenizer (o200k_base when the model names none, or no model is named) over the
 *    instructions, the stored turns and the input, the tool definitions as JSON, and the framing per
 *    message and allowance per image that holds use
 *
 * Nothing is held or charged, and it counts toward no rate limit.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import {
  ResponsesInputTokensRequest,
  responsesInputTokensFields,
  type ResponsesRequest,
} from '../../../../shared/schemas/responses.ts'
import { loadTokenizer, type TokenizerName } from '../../../core/catalog/tokenizers.ts'
import type { Call } from '../../../core/call.ts'
import type { KeyRecord } from '../../../core/key-record.ts'
import type { Turn } from '../../../core/neutral/conversation.ts'
import { keyEndpoint, type JsonAnswer } from '../../endpoint.ts'
import { promptOverhead } from '../../estimate.ts'
import type { Gateway } from '../../gateway.ts'
import { envelope } from '../../validate.ts'
import { countBody, countedCandidate, guardCount } from '../../counts.ts'
import { chatErrorBody } from '../chat/render-error.ts'
import { responsesEnvelope } from './envelope.ts'
import { measureResponsesPrompt, storedTurns } from './style.ts'
import { responsesTexts, responsesUsesTools, turnTexts } from './texts.ts'
import { responsesConversation } from './to-conversation.ts'

/** A count's body: a Responses request whose model and input may be absent. */
type CountBody = Omit<ResponsesRequest, 'model' | 'input'> & {
  model?: string | null
  input?: ResponsesRequest['input'] | null
}

const countEnvelope = envelope<CountBody>(
  ResponsesInputTokensRequest,
  responsesInputTokensFields,
  responsesEnvelope.rules as (body: CountBody) => ServiceError | undefined,
)

export function countResponsesInputTokens(
  gw: Gateway,
  request: Request,
  address: () => string,
): Promise<Response> {
  return keyEndpoint(
    gw,
    request,
    { style: 'responses', render: () => chatErrorBody, address },
    (key, call) => count(gw, request, key, call),
  )
}

async function count(
  gw: Gateway,
  request: Request,
  key: KeyRecord,
  call: Call,
): Promise<JsonAnswer> {
  const counted = await countBody(request, countEnvelope)
  // Read as the request it counts: no input is an empty one.
  const body = { ...counted.body, input: counted.body.input ?? [] } as ResponsesRequest

  const previous = body.previous_response_id
    ? await storedTurns(gw.responses, body.previous_response_id, key.accountId)
    : []
  if (previous instanceof ServiceError) throw previous
  const translated = responsesConversation(body, previous)
  if (translated instanceof ServiceError) throw translated
  const prompt = measureResponsesPrompt(body, counted.bytes, previous)

  const model = counted.body.model
  const tokenizer = model
    ? countedCandidate(gw, key, call, model, {
        fallbacksField: 'models',
        tools: responsesUsesTools(body),
        images: prompt.images > 0,
      }).model.tokenizer
    : undefined
  await guardCount(
    key,
    call,
    (visit) => responsesTexts(body, visit),
    (visit) => turnTexts(previous, visit),
  )

  return {
    body: {
      object: 'response.input_tokens',
      input_tokens: await countInput(
        tokenizer ?? 'o200k_base',
        body,
        previous,
        promptOverhead(prompt),
      ),
    },
  }
}

/** The tokenizer's count of what the model reads, the tool definitions as JSON, with `overhead` beside. */
async function countInput(
  tokenizer: TokenizerName,
  body: ResponsesRequest,
  previous: Turn[],
  overhead: number,
): Promise<number> {
  const countText = await loadTokenizer(tokenizer)
  let tokens = overhead
  const visit = (text: string) => {
    tokens += countText(text)
    return undefined
  }
  // The tools are counted whole, as JSON, once: their descriptions are not counted again as texts.
  responsesTexts({ ...body, tools: undefined }, visit)
  turnTexts(previous, visit)
  if (body.tools !== undefined && body.tools.length > 0)
    tokens += countText(JSON.stringify(body.tools))
  return tokens
}
