/**
 * The envelope of a Chat Completions request: the fields the gateway reads itself are typed; every
 * other field of the Chat Completions style passes through to the provider unchanged. Fields outside
 * the style (and outside the gateway's own `models` and `provider`) are refused by name, as the
 * upstream API itself would refuse them.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'

const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const ChatMessage = Type.Object(
  {
    role: Type.String({ minLength: 1 }),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: true },
)

export const ChatRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    stream: nullable(Type.Boolean()),
    stream_options: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Object(
          { include_usage: Type.Optional(Type.Boolean()) },
          { additionalProperties: true },
        ),
      ]),
    ),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 128 }), Type.Null()])),
    // Sampling and output options: typed here so that a wrong type is refused by name for every
    // provider, rather than forwarded to one and dropped for another. Ranges are the provider's to judge.
    temperature: nullable(Type.Number()),
    top_p: nullable(Type.Number()),
    frequency_penalty: nullable(Type.Number()),
    presence_penalty: nullable(Type.Number()),
    seed: nullable(Type.Integer()),
    logprobs: nullable(Type.Boolean()),
    top_logprobs: nullable(Type.Integer()),
    parallel_tool_calls: nullable(Type.Boolean()),
    store: nullable(Type.Boolean()),
    // Options a provider of another style maps or cannot take (refused by name there): typed too, so a
    // wrong type is not forwarded to one style and dropped on the way to the other.
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()])),
    user: nullable(Type.String()),
    safety_identifier: nullable(Type.String()),
    metadata: nullable(Type.Object({}, { additionalProperties: true })),
    response_format: nullable(
      Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
    ),
    tools: nullable(Type.Array(Type.Object({}, { additionalProperties: true }))),
    modalities: nullable(Type.Array(Type.String())),
    reasoning_effort: nullable(Type.String()),
    service_tier: nullable(Type.String()),
    prediction: nullable(Type.Object({}, { additionalProperties: true })),
    web_search_options: nullable(Type.Object({}, { additionalProperties: true })),
    /** Ordered fallback models, tried when the one before could not start a response. */
    models: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 3 })),
    provider: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
)
export type ChatRequest = Static<typeof ChatRequest>

/** Top-level fields of the Chat Completions style (OpenAI's CreateChatCompletionRequest) and the gateway's own. */
export const chatRequestFields = new Set([
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'messages',
  'metadata',
  'modalities',
  'model',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
  'models',
  'provider',
])
