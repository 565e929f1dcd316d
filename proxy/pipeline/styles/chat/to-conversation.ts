/**
 * A Chat Completions request in neutral form, for a provider of another style. What that provider cannot
 * receive (audio and file parts, an answer in audio or an earlier one, several choices, log
 * probabilities, web search, custom tools) is refused by field, rather than dropped. Legacy function
 * calls and their results become tool calls and results (legacy-functions.ts).
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import {
  inlineFile,
  type ContentPart,
  type Conversation,
  type Tool,
  type ToolCall,
  type ToolChoice,
  type Turn,
} from '../../../core/neutral/conversation.ts'
import { legacyCallId, usesLegacyFunctions } from './legacy-functions.ts'

type Part = {
  type?: unknown
  text?: unknown
  refusal?: unknown
  image_url?: { url?: unknown; detail?: unknown }
  file?: { file_data?: unknown; file_id?: unknown; filename?: unknown }
}
type Message = {
  role: string
  content?: unknown
  refusal?: unknown
  audio?: unknown
  tool_calls?: {
    id?: unknown
    type?: unknown
    function?: { name?: unknown; arguments?: unknown }
  }[]
  function_call?: { name?: unknown; arguments?: unknown }
  tool_call_id?: unknown
}

/** The legacy function call awaiting its result (the last assistant `function_call`). */
type Pending = { callId?: string }

const refuse = (param: string, message: string) =>
  new ServiceError('invalid_request', `${param}: ${message}`, { param })

export function chatConversation(body: ChatRequest): Conversation | ServiceError {
  if ((body.n ?? 1) > 1) return refuse('n', "only 1 is supported by this model's provider")
  const raw = body as Record<string, unknown>
  // An answer asked for in audio would come back as text only, which the client would not expect.
  if (Array.isArray(raw.modalities) && raw.modalities.includes('audio'))
    return refuse('modalities', "audio output is not supported by this model's provider")
  // Asked-for log probabilities would come back null, and a web search would not be made.
  if (raw.logprobs === true)
    return refuse('logprobs', "log probabilities are not supported by this model's provider")
  if (raw.web_search_options !== undefined && raw.web_search_options !== null)
    return refuse('web_search_options', "web search is not supported by this model's provider")
  const turns: Turn[] = []
  const pending: Pending = {}
  for (const [index, message] of (body.messages as Message[]).entries()) {
    const turn = chatTurn(message, index, pending)
    if (turn instanceof ServiceError) return turn
    turns.push(turn)
  }
  const tools = chatTools(body)
  if (tools instanceof ServiceError) return tools
  const toolChoice = chatToolChoice(raw.tool_choice ?? raw.function_call)
  if (toolChoice instanceof ServiceError) return toolChoice
  const responseFormat = chatResponseFormat(raw.response_format)
  if (responseFormat instanceof ServiceError) return responseFormat
  const stop = raw.stop
  return {
    turns,
    tools,
    toolChoice,
    // Legacy function calling makes one call at a time.
    parallelToolCalls: usesLegacyFunctions(body)
      ? false
      : typeof raw.parallel_tool_calls === 'boolean'
        ? raw.parallel_tool_calls
        : undefined,
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: typeof raw.temperature === 'number' ? raw.temperature : undefined,
    topP: typeof raw.top_p === 'number' ? raw.top_p : undefined,
    stop:
      typeof stop === 'string'
        ? [stop]
        : Array.isArray(stop)
          ? stop.filter((item): item is string => typeof item === 'string')
          : [],
    seed: typeof raw.seed === 'number' ? raw.seed : undefined,
    responseFormat,
    user:
      typeof raw.user === 'string'
        ? raw.user
        : typeof raw.safety_identifier === 'string'
          ? raw.safety_identifier
          : undefined,
    stream: body.stream === true,
  }
}

function chatTurn(message: Message, index: number, pending: Pending): Turn | ServiceError {
  const at = `messages[${index}]`
  switch (message.role) {
    case 'system':
    case 'developer': {
      const parts = contentParts(message.content, `${at}.content`)
      if (parts instanceof ServiceError) return parts
      return {
        role: 'system',
        text: parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      }
    }
    case 'user': {
      const content = contentParts(message.content, `${at}.content`)
      return content instanceof ServiceError ? content : { role: 'user', content }
    }
    case 'assistant': {
      // An earlier answer in audio is kept by the provider that made it, under this ID.
      if (message.audio !== undefined && message.audio !== null)
        return refuse(
          `${at}.audio`,
          "an earlier audio answer cannot be sent to this model's provider",
        )
      const refusal = typeof message.refusal === 'string' ? message.refusal : ''
      const parts = contentParts(message.content ?? refusal, `${at}.content`)
      if (parts instanceof ServiceError) return parts
      const toolCalls: ToolCall[] = []
      const calls = message.tool_calls ?? []
      if (!Array.isArray(calls)) return refuse(`${at}.tool_calls`, 'must be an array')
      for (const [index, call] of calls.entries()) {
        if (call?.type === 'custom')
          return refuse(
            `${at}.tool_calls[${index}]`,
            "custom tool calls cannot be sent to this model's provider",
          )
        if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string')
          return refuse(`${at}.tool_calls[${index}]`, 'needs an id and a function name')
        toolCalls.push({
          id: call.id,
          name: call.function.name,
          arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '{}',
        })
      }
      if (message.function_call && typeof message.function_call.name === 'string') {
        const args = message.function_call.arguments
        pending.callId = legacyCallId(index, message.function_call.name)
        toolCalls.push({
          id: pending.callId,
          name: message.function_call.name,
          arguments: typeof args === 'string' ? args : '{}',
        })
      }
      return {
        role: 'assistant',
        text: parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
        toolCalls,
      }
    }
    case 'tool': {
      if (typeof message.tool_call_id !== 'string')
        return refuse(`${at}.tool_call_id`, 'is required')
      const content = contentParts(message.content ?? '', `${at}.content`)
      return content instanceof ServiceError
        ? content
        : { role: 'tool', toolCallId: message.tool_call_id, content, isError: false }
    }
    case 'function': {
      const callId = pending.callId
      if (callId === undefined)
        return refuse(at, "a function result must follow an assistant message's function_call")
      pending.callId = undefined
      const content = contentParts(message.content ?? '', `${at}.content`)
      return content instanceof ServiceError
        ? content
        : { role: 'tool', toolCallId: callId, content, isError: false }
    }
    default:
      return refuse(`${at}.role`, `unknown role ${JSON.stringify(message.role)}`)
  }
}

function contentParts(content: unknown, at: string): ContentPart[] | ServiceError {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (content === null || content === undefined) return []
  if (!Array.isArray(content)) return refuse(at, 'must be a string or an array of parts')
  const parts: ContentPart[] = []
  for (const [index, part] of (content as Part[]).entries()) {
    if (part?.type === 'text' && typeof part.text === 'string')
      parts.push({ type: 'text', text: part.text })
    else if (part?.type === 'refusal' && typeof part.refusal === 'string')
      parts.push({ type: 'text', text: part.refusal })
    else if (part?.type === 'image_url' && typeof part.image_url?.url === 'string') {
      parts.push({
        type: 'image',
        url: part.image_url.url,
        ...(typeof part.image_url.detail === 'string' ? { detail: part.image_url.detail } : {}),
      })
    } else if (part?.type === 'file') {
      const file = inlineFile(part.file?.file_data, part.file?.filename)
      if (!file)
        return refuse(
          `${at}[${index}].file.file_data`,
          "is required as a base64 data URL for this model's provider (a file by ID cannot be sent)",
        )
      parts.push(file)
    } else
      return refuse(
        `${at}[${index}]`,
        `parts of type ${JSON.stringify(part?.type)} cannot be sent to this model's provider`,
      )
  }
  return parts
}

function chatTools(body: ChatRequest): Tool[] | ServiceError {
  const raw = body as { tools?: unknown; functions?: unknown }
  const tools: Tool[] = []
  const list = Array.isArray(raw.tools) ? raw.tools : []
  for (const [index, tool] of (
    list as { type?: unknown; function?: Record<string, unknown> }[]
  ).entries()) {
    if (tool?.type !== 'function' || typeof tool.function?.name !== 'string') {
      return refuse(`tools[${index}]`, "only function tools can be sent to this model's provider")
    }
    tools.push(toTool(tool.function))
  }
  for (const fn of Array.isArray(raw.functions)
    ? (raw.functions as Record<string, unknown>[])
    : []) {
    if (typeof fn?.name === 'string') tools.push(toTool(fn))
  }
  return tools
}

function toTool(fn: Record<string, unknown>): Tool {
  return {
    name: fn.name as string,
    ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
    parameters:
      typeof fn.parameters === 'object' && fn.parameters !== null
        ? (fn.parameters as Record<string, unknown>)
        : { type: 'object', properties: {} },
    ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
  }
}

function chatToolChoice(choice: unknown): ToolChoice | undefined | ServiceError {
  if (choice === undefined || choice === null) return undefined
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice
  const named = choice as {
    type?: unknown
    function?: { name?: unknown }
    name?: unknown
    allowed_tools?: { mode?: unknown; tools?: { type?: unknown; function?: { name?: unknown } }[] }
  }
  if (named.type === 'allowed_tools') {
    const { mode, tools } = named.allowed_tools ?? {}
    const names = Array.isArray(tools) ? tools.map((tool) => tool?.function?.name) : []
    if ((mode === 'auto' || mode === 'required') && names.every((name) => typeof name === 'string'))
      return { allowed: names as string[], mode }
    return refuse(
      'tool_choice.allowed_tools',
      "only function tools, allowed in mode auto or required, can be sent to this model's provider",
    )
  }
  const name = named.function?.name ?? named.name
  if (typeof name === 'string') return { name }
  return refuse('tool_choice', 'must be auto, none, required, allowed tools or a named function')
}

/**
 * The answer's format. A JSON schema format needs its `json_schema` (as the style's own API says); one
 * without a schema asks for JSON of any shape. A format of another type is refused, not answered in text.
 */
function chatResponseFormat(format: unknown): Conversation['responseFormat'] | ServiceError {
  const value = format as
    | { type?: unknown; json_schema?: { name?: unknown; schema?: unknown; strict?: unknown } }
    | null
    | undefined
  if (value === undefined || value === null || value.type === 'text') return undefined
  if (value.type === 'json_object') return { type: 'json_object' }
  if (value.type !== 'json_schema')
    return refuse(
      'response_format.type',
      `${JSON.stringify(value.type)} cannot be sent to this model's provider (text, json_object or json_schema)`,
    )
  if (typeof value.json_schema !== 'object' || value.json_schema === null)
    return refuse('response_format.json_schema', 'is required for the json_schema type')
  if (typeof value.json_schema.schema === 'object' && value.json_schema.schema !== null) {
    return {
      type: 'json_schema',
      name: typeof value.json_schema.name === 'string' ? value.json_schema.name : 'response',
      schema: value.json_schema.schema as Record<string, unknown>,
      ...(typeof value.json_schema.strict === 'boolean'
        ? { strict: value.json_schema.strict }
        : {}),
    }
  }
  return { type: 'json_object' }
}
