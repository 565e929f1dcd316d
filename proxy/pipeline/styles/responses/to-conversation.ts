/**
 * A Responses request in neutral form: `instructions`, then the stored turns of `previous_response_id`
 * (if any), then the input items. Function calls become an assistant turn's tool calls, their
 * outputs tool turns. What no provider style here can carry (built-in tools, files, item references,
 * background mode, stored prompts and conversations) is refused by field.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import {
  inlineFile,
  type ContentPart,
  type Conversation,
  type ResponseFormat,
  type Tool,
  type ToolChoice,
  type Turn,
} from '../../../core/neutral/conversation.ts'

type Item = {
  type?: unknown
  role?: unknown
  content?: unknown
  call_id?: unknown
  name?: unknown
  arguments?: unknown
  output?: unknown
}
type Part = {
  type?: unknown
  text?: unknown
  refusal?: unknown
  image_url?: unknown
  file_id?: unknown
  file_data?: unknown
  filename?: unknown
  detail?: unknown
}

const refuse = (param: string, message: string) =>
  new ServiceError('invalid_request', `${param}: ${message}`, { param })
const unsupported = ['background', 'conversation', 'prompt'] as const

export function responsesConversation(
  body: ResponsesRequest,
  previous: Turn[] = [],
): Conversation | ServiceError {
  const raw = body as Record<string, unknown>
  for (const field of unsupported) {
    if (raw[field] !== undefined && raw[field] !== null && raw[field] !== false)
      return refuse(field, 'is not supported by this gateway')
  }
  // Instructions open the context, as the style places them: after the stored turns they would come
  // between a stored function call and its output, which Chat Completions providers refuse.
  const stored = previous.map(storedTurn)
  const turns: Turn[] =
    typeof body.instructions === 'string' && body.instructions !== ''
      ? [{ role: 'system', text: body.instructions }, ...stored]
      : stored
  const input = inputTurns(body.input)
  if (input instanceof ServiceError) return input
  turns.push(...input)
  const tools = responsesTools(body.tools)
  if (tools instanceof ServiceError) return tools
  const toolChoice = responsesToolChoice(raw.tool_choice)
  if (toolChoice instanceof ServiceError) return toolChoice
  return {
    turns,
    tools,
    toolChoice,
    parallelToolCalls:
      typeof raw.parallel_tool_calls === 'boolean' ? raw.parallel_tool_calls : undefined,
    maxOutputTokens: body.max_output_tokens ?? undefined,
    temperature: typeof raw.temperature === 'number' ? raw.temperature : undefined,
    topP: typeof raw.top_p === 'number' ? raw.top_p : undefined,
    stop: [],
    responseFormat: textFormat(raw.text),
    reasoningEffort: reasoningEffort(raw.reasoning),
    user:
      typeof raw.safety_identifier === 'string'
        ? raw.safety_identifier
        : typeof raw.user === 'string'
          ? raw.user
          : undefined,
    stream: body.stream === true,
  }
}

/**
 * A stored turn as it goes on. An answer the output limit cut can end in a function call whose arguments
 * are unfinished JSON; the call goes on with an empty object, as the input's calls must be JSON objects
 * (see the envelope) and a Messages-style provider takes nothing else, so the conversation continues with
 * the call's output instead of being refused at every follow-up.
 */
function storedTurn(turn: Turn): Turn {
  if (turn.role !== 'assistant' || turn.toolCalls.every((call) => isJsonObject(call.arguments)))
    return turn
  return {
    ...turn,
    toolCalls: turn.toolCalls.map((call) =>
      isJsonObject(call.arguments) ? call : { ...call, arguments: '{}' },
    ),
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value)
  } catch {
    return false
  }
}

/** The turns of the input items alone (what a stored response keeps of its request). */
export function inputTurns(input: ResponsesRequest['input']): Turn[] | ServiceError {
  if (input === undefined) return []
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }]
  const turns: Turn[] = []
  for (const [index, item] of (input as Item[]).entries()) {
    const at = `input[${index}]`
    const type = item.type ?? 'message'
    if (type === 'message') {
      const turn = messageTurn(item, at)
      if (turn instanceof ServiceError) return turn
      turns.push(turn)
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string')
        return refuse(at, 'a function_call needs call_id and name')
      const call = {
        id: item.call_id,
        name: item.name,
        arguments: typeof item.arguments === 'string' ? item.arguments : '{}',
      }
      const last = turns.at(-1)
      if (last?.role === 'assistant') last.toolCalls.push(call)
      else turns.push({ role: 'assistant', text: '', toolCalls: [call] })
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return refuse(`${at}.call_id`, 'is required')
      const content =
        typeof item.output === 'string'
          ? [{ type: 'text' as const, text: item.output }]
          : parts(item.output, `${at}.output`)
      if (content instanceof ServiceError) return content
      turns.push({ role: 'tool', toolCallId: item.call_id, content, isError: false })
    } else if (type !== 'reasoning') {
      return refuse(`${at}.type`, `items of type ${JSON.stringify(type)} are not supported`)
    }
  }
  return turns
}

function messageTurn(item: Item, at: string): Turn | ServiceError {
  const content =
    typeof item.content === 'string'
      ? [{ type: 'text' as const, text: item.content }]
      : parts(item.content, `${at}.content`)
  if (content instanceof ServiceError) return content
  const text = () => content.map((part) => (part.type === 'text' ? part.text : '')).join('')
  switch (item.role) {
    case 'user':
      return { role: 'user', content }
    case 'system':
    case 'developer':
      return { role: 'system', text: text() }
    case 'assistant':
      return { role: 'assistant', text: text(), toolCalls: [] }
    default:
      return refuse(`${at}.role`, `unknown role ${JSON.stringify(item.role)}`)
  }
}

function parts(content: unknown, at: string): ContentPart[] | ServiceError {
  if (!Array.isArray(content)) return refuse(at, 'must be a string or an array of parts')
  const result: ContentPart[] = []
  for (const [index, part] of (content as Part[]).entries()) {
    const type = part?.type
    if (
      (type === 'input_text' || type === 'output_text' || type === 'text') &&
      typeof part.text === 'string'
    )
      result.push({ type: 'text', text: part.text })
    else if (type === 'refusal' && typeof part.refusal === 'string')
      result.push({ type: 'text', text: part.refusal })
    else if (type === 'input_image' && typeof part.image_url === 'string') {
      result.push({
        type: 'image',
        url: part.image_url,
        ...(typeof part.detail === 'string' && part.detail !== 'auto'
          ? { detail: part.detail }
          : {}),
      })
    } else if (type === 'input_file') {
      const file = inlineFile(part.file_data, part.filename)
      if (!file)
        return refuse(
          `${at}[${index}].file_data`,
          'is required as a base64 data URL (uploaded files and files by URL are not supported)',
        )
      result.push(file)
    } else if (type === 'input_text' || type === 'output_text' || type === 'text')
      return refuse(`${at}[${index}].text`, 'is required')
    else if (type === 'input_image')
      return refuse(`${at}[${index}].image_url`, 'is required (uploaded files are not supported)')
    else
      return refuse(
        `${at}[${index}]`,
        `parts of type ${JSON.stringify(type)} are not supported (uploaded files included)`,
      )
  }
  return result
}

function responsesTools(tools: ResponsesRequest['tools']): Tool[] | ServiceError {
  const result: Tool[] = []
  for (const [index, tool] of (tools ?? []).entries()) {
    const fn = tool as {
      type: string
      name?: unknown
      description?: unknown
      parameters?: unknown
      strict?: unknown
    }
    if (fn.type !== 'function')
      return refuse(`tools[${index}]`, 'only function tools are supported')
    if (typeof fn.name !== 'string' || fn.name === '')
      return refuse(`tools[${index}].name`, 'is required')
    result.push({
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      parameters:
        typeof fn.parameters === 'object' && fn.parameters !== null
          ? (fn.parameters as Record<string, unknown>)
          : { type: 'object', properties: {} },
      ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
    })
  }
  return result
}

function responsesToolChoice(choice: unknown): ToolChoice | undefined | ServiceError {
  if (choice === undefined || choice === null) return undefined
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice
  const named = choice as {
    type?: unknown
    name?: unknown
    mode?: unknown
    tools?: { type?: unknown; name?: unknown }[]
  }
  if (named.type === 'function' && typeof named.name === 'string') return { name: named.name }
  if (named.type === 'allowed_tools') {
    const tools = Array.isArray(named.tools) ? named.tools : []
    const mode = named.mode
    if (
      (mode === 'auto' || mode === 'required') &&
      tools.every((tool) => tool?.type === 'function' && typeof tool.name === 'string')
    )
      return { allowed: tools.map((tool) => tool.name as string), mode }
    return refuse('tool_choice.tools', 'only function tools are supported')
  }
  return refuse('tool_choice', 'must be auto, none, required, allowed tools or a named function')
}

/** `reasoning.effort`, which Chat Completions calls `reasoning_effort`; the summary has no equivalent. */
function reasoningEffort(reasoning: unknown): string | undefined {
  const effort = (reasoning as { effort?: unknown } | null | undefined)?.effort
  return typeof effort === 'string' ? effort : undefined
}

function textFormat(text: unknown): ResponseFormat | undefined {
  const format = (
    text as
      | { format?: { type?: unknown; name?: unknown; schema?: unknown; strict?: unknown } }
      | undefined
  )?.format
  if (format?.type === 'json_object') return { type: 'json_object' }
  if (
    format?.type === 'json_schema' &&
    typeof format.schema === 'object' &&
    format.schema !== null
  ) {
    return {
      type: 'json_schema',
      name: typeof format.name === 'string' ? format.name : 'response',
      schema: format.schema as Record<string, unknown>,
      ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
    }
  }
  return undefined
}
