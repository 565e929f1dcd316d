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
import { guard } from '../../../policy/guardrails/guard.ts'
import { findPreset, isPresetId } from '../../../policy/routing/presets.ts'
import { resolveRouting } from '../../../policy/routing/resolve.ts'
import { keyEndpoint, type JsonAnswer } from '../../endpoint.ts'
import { promptOverhead } from '../../estimate.ts'
import type { Gateway } from '../../gateway.ts'
import { readJsonBody } from '../../read-body.ts'
import { checkSchemas } from '../../schema-limits.ts'
import { envelope, validate } from '../../validate.ts'
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
  const raw = await readJsonBody(request)
  if (!raw.ok) throw raw.error
  const valid = validate(raw.value, countEnvelope)
  if (!valid.ok) throw valid.error
  const schemas = checkSchemas(valid.value as Record<string, unknown>)
  if (schemas) throw schemas
  // Read as the request it counts: no input is an empty one.
  const body = { ...valid.value, input: valid.value.input ?? [] } as ResponsesRequest

  const previous = body.previous_response_id
    ? await storedTurns(gw.responses, body.previous_response_id, key.accountId)
    : []
  if (previous instanceof ServiceError) throw previous
  const translated = responsesConversation(body, previous)
  if (translated instanceof ServiceError) throw translated
  const prompt = measureResponsesPrompt(body, raw.bytes, previous)

  let tokenizer: TokenizerName = 'o200k_base'
  const named = valid.value.model
  if (named) {
    call.requestedModel = named
    const preset = isPresetId(named) ? findPreset(key, named, 'model') : undefined
    if (preset instanceof ServiceError) throw preset
    const routing = resolveRouting(gw.catalog, gw.health, key, {
      model: preset?.model ?? named,
      fallbacks: [],
      fallbacksField: 'models',
      features: { tools: responsesUsesTools(body), images: prompt.images > 0 },
      nowMs: Date.now(),
    })
    if (!routing.ok) throw routing.error
    tokenizer = routing.candidates[0]!.model.tokenizer ?? tokenizer
  }
  const guarded = await guard(key.guardrail, (visit) => {
    responsesTexts(body, visit)
    turnTexts(previous, visit)
  })
  if (!guarded.ok) throw guarded.error

  return {
    body: {
      object: 'response.input_tokens',
      input_tokens: await countInput(tokenizer, body, previous, promptOverhead(prompt)),
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
