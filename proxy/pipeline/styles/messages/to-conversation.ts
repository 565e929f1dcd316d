/**
 * A Messages request in neutral form, for a provider of another style. Tool results open their user
 * turn as separate tool turns; the rest of that turn follows as a user turn. A plain-text document is
 * sent as text. What the other style cannot carry (PDF documents, server tools, MCP servers, a region to
 * run in, a request that only warms the cache) is refused by field; thinking blocks are left out,
 * and `thinking` is kept as its budget (a reasoning model's effort, where the catalog says it takes one).
 * An `output_config` format and effort become the style's JSON format and reasoning effort.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { MessagesRequest } from '../../../../shared/schemas/messages.ts'
import type {
  ContentPart,
  Conversation,
  Tool,
  ToolCall,
  ToolChoice,
  Turn,
} from '../../../core/neutral/conversation.ts'
import { contentParts, refuse, type Block } from './content-parts.ts'

export function messagesConversation(body: MessagesRequest): Conversation | ServiceError {
  const raw = body as Record<string, unknown>
  const turns: Turn[] = []
  const system = systemText(body.system)
  if (system instanceof ServiceError) return system
  if (system !== '') turns.push({ role: 'system', text: system })
  for (const [index, message] of body.messages.entries()) {
    const at = `messages[${index}]`
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : (message.content as Block[])
    const result =
      message.role === 'assistant'
        ? assistantTurn(content, at)
        : message.role === 'system'
          ? systemTurn(content, at)
          : userTurns(content, at)
    if (result instanceof ServiceError) return result
    turns.push(...result)
  }
  const tools = messagesTools(raw.tools)
  if (tools instanceof ServiceError) return tools
  // The provider's MCP connector calls these servers' tools: another style has none.
  if (Array.isArray(raw.mcp_servers) && raw.mcp_servers.length > 0)
    return refuse('mcp_servers', "MCP servers cannot be sent to this model's provider")
  const choice = raw.tool_choice as
    | { type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown }
    | undefined
  const toolChoice: ToolChoice | undefined =
    choice?.type === 'any'
      ? 'required'
      : choice?.type === 'none'
        ? 'none'
        : choice?.type === 'tool' && typeof choice.name === 'string'
          ? { name: choice.name }
          : choice?.type === 'auto'
            ? 'auto'
            : undefined
  if (choice !== undefined && toolChoice === undefined)
    return refuse(
      'tool_choice',
      'must be {"type": "auto"}, {"type": "any"}, {"type": "none"} or {"type": "tool", "name": …}',
    )
  const metadata = raw.metadata as { user_id?: unknown } | undefined
  const thinking = raw.thinking as { type?: unknown; budget_tokens?: unknown } | undefined
  const budget = typeof thinking?.budget_tokens === 'number'
  if (
    thinking !== undefined &&
    !(thinking.type === 'enabled'
      ? budget
      : ['adaptive', 'between_tools', 'disabled'].includes(String(thinking.type)))
  )
    return refuse(
      'thinking',
      'must be {"type": "enabled", "budget_tokens": …}, {"type": "adaptive"}, {"type": "between_tools"} or {"type": "disabled"}',
    )
  // A request of no output only warms the provider's prompt cache, which another style has no way to.
  if (body.max_tokens === 0)
    return refuse(
      'max_tokens',
      "0 (warming the prompt cache) is not supported by this model's provider",
    )
  // Where the model runs is the client's requirement: another style's provider cannot promise it.
  if (raw.inference_geo !== undefined && raw.inference_geo !== null)
    return refuse('inference_geo', "this model's provider cannot be asked where it runs the model")
  const output = outputConfig(raw.output_config)
  if (output instanceof ServiceError) return output
  return {
    turns,
    tools,
    toolChoice,
    parallelToolCalls: choice?.disable_parallel_tool_use === true ? false : undefined,
    maxOutputTokens: body.max_tokens,
    temperature: typeof raw.temperature === 'number' ? raw.temperature : undefined,
    topP: typeof raw.top_p === 'number' ? raw.top_p : undefined,
    topK: typeof raw.top_k === 'number' ? raw.top_k : undefined,
    stop: body.stop_sequences ?? [],
    thinkingBudget:
      thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number'
        ? thinking.budget_tokens
        : undefined,
    user: typeof metadata?.user_id === 'string' ? metadata.user_id : undefined,
    stream: body.stream === true,
    ...output,
  }
}

/**
 * `output_config`: a JSON schema format asks for JSON of that shape, as a Chat Completions
 * `response_format` does, and the effort is a reasoning model's effort (the styles name the same levels).
 */
function outputConfig(
  config: unknown,
): Pick<Conversation, 'responseFormat' | 'reasoningEffort'> | ServiceError {
  const value = config as
    | { effort?: unknown; format?: { type?: unknown; schema?: unknown } | null }
    | null
    | undefined
  const format = value?.format
  if (
    format != null &&
    (format.type !== 'json_schema' || typeof format.schema !== 'object' || format.schema === null)
  )
    return refuse('output_config.format', 'must be {"type": "json_schema", "schema": {…}}')
  return {
    ...(format != null
      ? {
          responseFormat: {
            type: 'json_schema' as const,
            name: 'response',
            schema: format.schema as Record<string, unknown>,
          },
        }
      : {}),
    ...(typeof value?.effort === 'string' ? { reasoningEffort: value.effort } : {}),
  }
}

function systemText(system: MessagesRequest['system']): string | ServiceError {
  if (system === undefined) return ''
  if (typeof system === 'string') return system
  const blocks = system as Block[]
  const index = blocks.findIndex((block) => block.type !== 'text' || typeof block.text !== 'string')
  if (index >= 0)
    return refuse(`system[${index}]`, "only text blocks can be sent to this model's provider")
  return blocks.map((block) => block.text as string).join('\n')
}

function systemTurn(blocks: Block[], at: string): Turn[] | ServiceError {
  const text = systemText(blocks as MessagesRequest['system'])
  return text instanceof ServiceError
    ? refuse(`${at}.content`, 'must be text')
    : [{ role: 'system', text }]
}

function userTurns(blocks: Block[], at: string): Turn[] | ServiceError {
  const turns: Turn[] = []
  const content: ContentPart[] = []
  for (const [index, block] of blocks.entries()) {
    const where = `${at}.content[${index}]`
    if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string')
        return refuse(`${where}.tool_use_id`, 'is required')
      const result =
        typeof block.content === 'string'
          ? [{ type: 'text', text: block.content } as Block]
          : ((block.content ?? []) as Block[])
      if (!Array.isArray(result))
        return refuse(`${where}.content`, 'must be a string or an array of blocks')
      const parts = contentParts(result, `${where}.content`)
      if (parts instanceof ServiceError) return parts
      turns.push({
        role: 'tool',
        toolCallId: block.tool_use_id,
        content: parts,
        isError: block.is_error === true,
      })
      continue
    }
    const parts = contentParts([block], where)
    if (parts instanceof ServiceError) return parts
    content.push(...parts)
  }
  if (content.length > 0) turns.push({ role: 'user', content })
  return turns
}

function assistantTurn(blocks: Block[], at: string): Turn[] | ServiceError {
  let text = ''
  const toolCalls: ToolCall[] = []
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text' && typeof block.text === 'string') text += block.text
    else if (block.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string')
        return refuse(`${at}.content[${index}]`, 'a tool_use block needs an id and a name')
      toolCalls.push({
        id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
      })
    } else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      return refuse(
        `${at}.content[${index}]`,
        `blocks of type ${block.type} cannot be sent to this model's provider`,
      )
    }
  }
  return [{ role: 'assistant', text, toolCalls }]
}

function messagesTools(tools: unknown): Tool[] | ServiceError {
  if (!Array.isArray(tools)) return []
  const result: Tool[] = []
  for (const [index, tool] of (
    tools as { type?: unknown; name?: unknown; description?: unknown; input_schema?: unknown }[]
  ).entries()) {
    if ((tool.type !== undefined && tool.type !== 'custom') || typeof tool.name !== 'string') {
      return refuse(`tools[${index}]`, "only custom tools can be sent to this model's provider")
    }
    result.push({
      name: tool.name,
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      parameters:
        typeof tool.input_schema === 'object' && tool.input_schema !== null
          ? (tool.input_schema as Record<string, unknown>)
          : { type: 'object', properties: {} },
    })
  }
  return result
}
