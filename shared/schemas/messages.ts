/**
 * The envelope of a Messages request: the fields the gateway reads itself are typed; the rest of the
 * style passes through to a provider of the same style. Fields outside the style (and outside the
 * gateway's own `fallbacks`) are refused by name, as the style's own API refuses extra inputs.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'

const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const MessagesMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
    content: Type.Union([
      Type.String(),
      Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    ]),
  },
  { additionalProperties: true },
)

export type MessagesThread = { type: 'create' } | { type: 'continue'; previous_message_id: string }

export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    /** 0 only warms the provider's prompt cache: nothing is generated. */
    max_tokens: Type.Integer({ minimum: 0 }),
    /** Non-empty, except in a thread's continue (the style's rules check it). */
    messages: Type.Array(MessagesMessage),
    system: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
      ]),
    ),
    stream: Type.Optional(Type.Boolean()),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    // Sampling and tool options: typed here so that a wrong type is refused by name for every provider,
    // rather than forwarded to one and dropped for another. Ranges are the provider's to judge.
    temperature: nullable(Type.Number()),
    top_p: nullable(Type.Number()),
    top_k: nullable(Type.Integer()),
    tool_choice: Type.Optional(
      Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
    ),
    thinking: Type.Optional(
      Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
    ),
    metadata: nullable(Type.Object({}, { additionalProperties: true })),
    // A toolset (`browser_toolset_…`, `computer_toolset_…`) has a type and no name.
    tools: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1 })) },
          { additionalProperties: true },
        ),
      ),
    ),
    /**
     * A message thread (the style's `message-threads` beta): `create` starts one, `continue` sends only
     * the messages after a reply of one. Checked by the style's rules, which name the part that is wrong.
     */
    thread: Type.Optional(Type.Unsafe<MessagesThread>(Type.Unknown())),
    /** Ordered fallback models, tried when the one before could not start a response. */
    fallbacks: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 3 })),
  },
  { additionalProperties: true },
)
export type MessagesRequest = Static<typeof MessagesRequest>

/**
 * A Messages request whose input is counted (`POST /v1/messages/count_tokens`): the same envelope with
 * no output limit required, since nothing is generated.
 */
export const MessagesCountTokensRequest = Type.Composite(
  [
    Type.Omit(MessagesRequest, ['max_tokens']),
    Type.Object({ max_tokens: Type.Optional(Type.Integer({ minimum: 0 })) }),
  ],
  { additionalProperties: true },
)
export type MessagesCountTokensRequest = Static<typeof MessagesCountTokensRequest>

/** Top-level fields of the Messages style (Anthropic's MessageCreateParams) and the gateway's own. */
export const messagesRequestFields = new Set([
  'model',
  'max_tokens',
  'messages',
  'cache_control',
  'container',
  'context_management',
  'diagnostics',
  'inference_geo',
  'mcp_servers',
  'metadata',
  'output_config',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'temperature',
  'thinking',
  'tool_choice',
  'tools',
  'top_k',
  'top_p',
  'thread',
  'fallbacks',
])
