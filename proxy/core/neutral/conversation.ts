/**
 * A request in neutral form, between the client's API style and the provider's: what every style can say
 * about a conversation, its tools and its sampling options. Client styles decode into it; provider
 * adapters encode from it. Same-style pairs skip it and pass the body through.
 */

export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; detail?: string }
  | FilePart

/** A file given inline (a PDF, a text file): its media type, its bytes in base64 and its name if known. */
export type FilePart = { type: 'file'; mediaType: string; data: string; filename?: string }

export type ToolCall = { id: string; name: string; arguments: string }

/** System text stays where the client put it; a provider that needs it in one place moves it there. */
export type Turn =
  | { role: 'system'; text: string }
  | { role: 'user'; content: ContentPart[] }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: ContentPart[]; isError: boolean }

export type Tool = {
  name: string
  description?: string
  parameters: Record<string, unknown>
  strict?: boolean
}

/** `allowed`: of the tools offered, the model may call only these, when it likes or at least one. */
export type ToolChoice =
  | 'auto'
  | 'required'
  | 'none'
  | { name: string }
  | { allowed: string[]; mode: 'auto' | 'required' }

export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean }

export type Conversation = {
  turns: Turn[]
  tools: Tool[]
  toolChoice?: ToolChoice
  parallelToolCalls?: boolean
  maxOutputTokens?: number
  temperature?: number
  topP?: number
  topK?: number
  stop: string[]
  seed?: number
  responseFormat?: ResponseFormat
  /** How hard a reasoning model thinks (`low`, `medium`, `high`…), as the OpenAI styles name it. */
  reasoningEffort?: string
  /** The tokens a Messages client allows the model to think (`thinking.budget_tokens`). */
  thinkingBudget?: number
  /** An end-user identifier for the provider's abuse monitoring. */
  user?: string
  stream: boolean
}

/**
 * A file sent as a base64 data URL (`data:application/pdf;base64,…`, parameters such as a name allowed
 * before `;base64`), as the OpenAI styles send one; undefined for anything else.
 */
export function fileFromDataUrl(url: string, filename?: string): FilePart | undefined {
  const match = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(url)
  if (!match) return undefined
  return {
    type: 'file',
    mediaType: match[1]!.toLowerCase(),
    data: match[2]!,
    ...(filename ? { filename } : {}),
  }
}

/** A file the OpenAI styles give inline: its data as a data URL and its name, if they are strings. */
export function inlineFile(data: unknown, filename: unknown): FilePart | undefined {
  if (typeof data !== 'string') return undefined
  return fileFromDataUrl(data, typeof filename === 'string' ? filename : undefined)
}

/** The file as a base64 data URL. */
export const fileDataUrl = (file: FilePart) => `data:${file.mediaType};base64,${file.data}`

/** A name for a file that came without one (a Messages document has only a title), by its type. */
export function defaultFilename(file: FilePart): string {
  if (file.mediaType === 'application/pdf') return 'document.pdf'
  if (file.mediaType === 'text/plain') return 'document.txt'
  return 'file'
}
