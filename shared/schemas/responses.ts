/**
 * The envelope of a Responses request: the fields the gateway reads itself are typed; the others are
 * read where they are translated. Fields outside the style (and outside the gateway's own `models`) are
 * refused by name.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'

const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    /** Required here: the gateway has no stored prompts or conversations to take the input from. */
    input: Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))]),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 16 }), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()])),
    // Sampling, tool and output options: typed so that a wrong type is refused by name rather than
    // dropped on the way to the provider (and echoed back in the response as sent). Ranges are the
    // provider's.
    temperature: nullable(Type.Number()),
    top_p: nullable(Type.Number()),
    top_logprobs: nullable(Type.Integer()),
    parallel_tool_calls: nullable(Type.Boolean()),
    text: nullable(Type.Object({}, { additionalProperties: true })),
    reasoning: nullable(Type.Object({}, { additionalProperties: true })),
    metadata: nullable(Type.Object({}, { additionalProperties: true })),
    tools: Type.Optional(
      Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    ),
    /** Ordered fallback models, tried when the one before could not start a response. */
    models: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 3 })),
  },
  { additionalProperties: true },
)
export type ResponsesRequest = Static<typeof ResponsesRequest>

/** Top-level fields of the Responses style (OpenAI's CreateResponse) and the gateway's own. */
export const responsesRequestFields = new Set([
  'access_programs',
  'background',
  'context_management',
  'conversation',
  'image',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'moderation',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
  'models',
])

/**
 * A request to count a Responses request's input tokens (`POST /v1/responses/input_tokens`, the SDK's
 * `responses.inputTokens.count`): the request's fields that make its input, each optional as the style
 * has them, the model and the input included.
 */
export const ResponsesInputTokensRequest = Type.Composite(
  [
    Type.Omit(ResponsesRequest, ['model', 'input']),
    Type.Object({
      model: nullable(Type.String({ minLength: 1 })),
      input: nullable(
        Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))]),
      ),
    }),
  ],
  { additionalProperties: true },
)

/** Top-level fields of the style's input token count (OpenAI's InputTokenCountParams). */
export const responsesInputTokensFields = new Set([
  'conversation',
  'input',
  'instructions',
  'model',
  'parallel_tool_calls',
  'personality',
  'previous_response_id',
  'reasoning',
  'text',
  'tool_choice',
  'tools',
  'truncation',
])
