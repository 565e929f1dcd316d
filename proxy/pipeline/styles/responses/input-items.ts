/**
 * `GET /v1/responses/{id}/input_items` (the SDK's `responses.inputItems.list`): the items a stored
 * response was made from, as the style lists them. For a response that followed up others
 * (`previous_response_id`) they are the whole conversation before its answer: each earlier exchange's
 * input and answer, then its own input. Items are rebuilt from the stored turns, so their IDs are the
 * gateway's (the response's ID and the item's place in it), stable from one listing to the next; a page
 * is `limit` items (20, at most 100) in `order` (`desc`, newest first, by default), after or before an
 * item's ID.
 */
import { ServiceError } from '../../../../shared/errors.ts'
import { fileDataUrl, type ContentPart, type Turn } from '../../../core/neutral/conversation.ts'

type Item = Record<string, unknown> & { id: string }

export type InputItemsPage = {
  object: 'list'
  data: Item[]
  first_id: string | null
  last_id: string | null
  has_more: boolean
}

const DEFAULT_LIMIT = 20
const MOST_LIMIT = 100

/**
 * The page `query` asks for of the input items of the conversation `chain` (each stored exchange's turns
 * under its response ID, the first first; the last one's final turn is the response's own answer).
 */
export function inputItemsPage(
  chain: { id: string; part: unknown }[],
  query: URLSearchParams,
): InputItemsPage | ServiceError {
  const limitText = query.get('limit')
  const limit = limitText === null ? DEFAULT_LIMIT : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > MOST_LIMIT)
    return refuse('limit', `must be a whole number from 1 to ${MOST_LIMIT}`)
  const order = query.get('order') ?? 'desc'
  if (order !== 'asc' && order !== 'desc') return refuse('order', "must be 'asc' or 'desc'")

  const items = chain.flatMap(({ id, part }, at) => {
    const turns = Array.isArray(part) ? (part as Turn[]) : []
    return turnItems(id, at === chain.length - 1 ? turns.slice(0, -1) : turns)
  })
  if (order === 'desc') items.reverse()
  let from = 0
  let to = items.length
  for (const [param, cursor] of [
    ['after', query.get('after')],
    ['before', query.get('before')],
  ] as const) {
    if (cursor === null) continue
    const index = items.findIndex((item) => item.id === cursor)
    if (index < 0) return refuse(param, `no input item ${cursor} in this response`)
    if (param === 'after') from = Math.max(from, index + 1)
    else to = Math.min(to, index)
  }
  // Before a cursor, the page is the items nearest to it.
  const window = query.has('before') && !query.has('after')
  const data = window
    ? items.slice(Math.max(from, to - limit), to)
    : items.slice(from, Math.min(to, from + limit))
  const has_more = window ? to - limit > from : from + limit < to
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more,
  }
}

/** A stored exchange's turns as the style's items, with IDs made of the response's and the item's place. */
function turnItems(responseId: string, turns: Turn[]): Item[] {
  const key = responseId.replace(/^resp_/, '')
  const items: Item[] = []
  const item = (prefix: string, fields: Record<string, unknown>) =>
    items.push({ id: `${prefix}_${key}_${items.length}`, ...fields })
  for (const turn of turns) {
    switch (turn.role) {
      case 'system':
        item('msg', message('system', [{ type: 'input_text', text: turn.text }]))
        break
      case 'user':
        item('msg', message('user', turn.content.map(inputPart)))
        break
      case 'assistant':
        if (turn.text)
          item(
            'msg',
            message('assistant', [{ type: 'output_text', text: turn.text, annotations: [] }]),
          )
        for (const call of turn.toolCalls)
          item('fc', {
            type: 'function_call',
            status: 'completed',
            call_id: call.id,
            name: call.name,
            arguments: call.arguments,
          })
        break
      case 'tool':
        item('fco', {
          type: 'function_call_output',
          status: 'completed',
          call_id: turn.toolCallId,
          output: turn.content.every((part) => part.type === 'text')
            ? turn.content.map((part) => part.text).join('')
            : turn.content.map(inputPart),
        })
        break
    }
  }
  return items
}

function message(role: string, content: Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'message', role, status: 'completed', content }
}

function inputPart(part: ContentPart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text }
    case 'image':
      return { type: 'input_image', image_url: part.url, detail: part.detail ?? 'auto' }
    case 'file':
      return {
        type: 'input_file',
        file_data: fileDataUrl(part),
        ...(part.filename ? { filename: part.filename } : {}),
      }
  }
}

function refuse(param: string, message: string): ServiceError {
  return new ServiceError('invalid_request', `${param}: ${message}`, { param })
}
