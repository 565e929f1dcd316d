/**
 * Responses streams, encoded from neutral events: `response.created` and `response.in_progress` first,
 * each output item added, filled and done in order (output indexes 0, 1, 2…), and `response.completed` or
 * `response.incomplete` last with the whole response and its usage with `cost`; a failure after the start
 * ends with `response.failed` and an `error` event. Every event carries a strictly increasing
 * `sequence_number`. A message's text and the model's refusal are parts of their own, each added,
 * filled (`output_text.delta`, `refusal.delta`) and done in turn.
 */
import type { ServiceError } from '../../../../shared/errors.ts'
import type { ResponsesRequest } from '../../../../shared/schemas/responses.ts'
import {
  argumentsWhole,
  KEEP_ALIVE_COMMENT,
  sse,
  type Charged,
  type Final,
  type StreamOutput,
} from '../../streams/stream-output.ts'
import type { AnswerPart, FinishReason } from '../../../core/neutral/answer.ts'
import type { AnswerContext } from '../client-style.ts'
import {
  finalStatus,
  itemId,
  itemParts,
  lastItemStatus,
  messagePart,
  responseObject,
  responsesUsage,
  type MessageItem,
  type OutputItem,
} from './output.ts'

type Open = { outputIndex: number; item: OutputItem; toolIndex?: number }
type OpenMessage = Open & { item: MessageItem }

/** `completed(parts, response)` is told the finished answer (to store it). */
export function responsesStreamOutput(
  context: AnswerContext<ResponsesRequest>,
  completed: (parts: AnswerPart[], response: Record<string, unknown>) => void,
): StreamOutput {
  let sequence = 0
  let model = context.modelId
  let started = false
  let finish: FinishReason = 'stop'
  const items: Open[] = []
  const tools = new Map<number, Open>()
  /**
   * The items not done yet, in output order. An item is done when the next one is added, except a
   * function call whose arguments are not whole JSON yet: some providers start a parallel call before
   * the previous one's arguments are complete (or before any), and then stream their fragments in turns.
   */
  let open: Open[] = []

  const event = (type: string, data: Record<string, unknown>) =>
    sse(JSON.stringify({ type, ...data, sequence_number: sequence++ }), type)
  const snapshot = (status: 'in_progress') => responseObject(context, { status, model, output: [] })
  const start = () => {
    if (started) return ''
    started = true
    return (
      event('response.created', { response: snapshot('in_progress') }) +
      event('response.in_progress', { response: snapshot('in_progress') })
    )
  }
  const add = (item: OutputItem, toolIndex?: number) => {
    const waiting = (at: Open) =>
      at.item.type === 'function_call' && !argumentsWhole(at.item.arguments)
    let out = open
      .filter((at) => !waiting(at))
      .map((at) => done(at, 'completed'))
      .join('')
    open = open.filter(waiting)
    const added = { outputIndex: items.length, item, toolIndex }
    items.push(added)
    open.push(added)
    out += event('response.output_item.added', {
      output_index: added.outputIndex,
      item: { ...item, ...(item.type === 'message' ? { content: [] } : { arguments: '' }) },
    })
    return out
  }
  /** Adds text to the open message: to its last part when of the same kind, else to a new part. */
  const write = ({ item, outputIndex }: OpenMessage, text: string, refusal?: true) => {
    const at = { item_id: item.id, output_index: outputIndex }
    let out = ''
    let part = item.content.at(-1)
    if (part?.type !== (refusal ? 'refusal' : 'output_text')) {
      if (part) out += closePart(item, outputIndex)
      part = messagePart('', refusal)
      item.content.push(part)
      out += event('response.content_part.added', {
        ...at,
        content_index: item.content.length - 1,
        part,
      })
    }
    const content_index = item.content.length - 1
    if (part.type === 'refusal') {
      part.refusal += text
      return out + event('response.refusal.delta', { ...at, content_index, delta: text })
    }
    part.text += text
    return (
      out + event('response.output_text.delta', { ...at, content_index, delta: text, logprobs: [] })
    )
  }
  /** Ends a message's last part: its whole text (or refusal), then the part. */
  const closePart = (item: MessageItem, outputIndex: number) => {
    const content_index = item.content.length - 1
    const part = item.content[content_index]
    if (!part) return ''
    const at = { item_id: item.id, output_index: outputIndex, content_index }
    return (
      (part.type === 'refusal'
        ? event('response.refusal.done', { ...at, refusal: part.refusal })
        : event('response.output_text.done', { ...at, text: part.text, logprobs: [] })) +
      event('response.content_part.done', { ...at, part })
    )
  }
  /** Ends the open items: completed when another follows them, the last as the answer ended. */
  const close = (status: OutputItem['status'] = 'completed') => {
    const closing = open
    open = []
    return closing
      .map((item, at) => done(item, at === closing.length - 1 ? status : 'completed'))
      .join('')
  }
  const done = ({ item, outputIndex }: Open, status: OutputItem['status']) => {
    item.status = status
    const at = { item_id: item.id, output_index: outputIndex }
    if (item.type === 'message') {
      return (
        closePart(item, outputIndex) +
        event('response.output_item.done', { output_index: outputIndex, item })
      )
    }
    // A call the provider streamed no arguments for still gets a JSON object, as clients parse them.
    const empty = item.arguments === ''
    if (empty) item.arguments = '{}'
    return (
      (empty ? event('response.function_call_arguments.delta', { ...at, delta: '{}' }) : '') +
      event('response.function_call_arguments.done', {
        ...at,
        name: item.name,
        arguments: item.arguments,
      }) +
      event('response.output_item.done', { output_index: outputIndex, item })
    )
  }

  return {
    event(_raw, events) {
      let out = ''
      for (const next of events) {
        switch (next.type) {
          case 'start':
            if (next.model) model = next.model
            out += start()
            break
          case 'text': {
            out += start()
            if (!open.some((at) => at.item.type === 'message')) {
              out += add({
                id: itemId('msg', context.requestId, items.length),
                type: 'message',
                role: 'assistant',
                status: 'in_progress',
                content: [],
              })
            }
            out += write(
              open.find((at) => at.item.type === 'message') as OpenMessage,
              next.text,
              next.refusal,
            )
            break
          }
          case 'tool_start': {
            out += start()
            const item: OutputItem = {
              id: itemId('fc', context.requestId, items.length),
              type: 'function_call',
              call_id: next.id,
              name: next.name,
              arguments: '',
              status: 'in_progress',
            }
            out += add(item, next.index)
            tools.set(next.index, items.at(-1)!)
            break
          }
          case 'tool_arguments': {
            const tool = tools.get(next.index)
            // A done call's arguments were whole: nothing can follow them.
            if (tool?.item.type !== 'function_call' || tool.item.status !== 'in_progress') break
            tool.item.arguments += next.text
            out += event('response.function_call_arguments.delta', {
              item_id: tool.item.id,
              output_index: tool.outputIndex,
              delta: next.text,
            })
            break
          }
          case 'finish':
            finish = next.reason
            out += close(lastItemStatus(finish))
            break
          case 'keepalive':
            out += KEEP_ALIVE_COMMENT
            break
        }
      }
      return out
    },
    complete(final: Final) {
      const { status, incomplete } = finalStatus(finish)
      const out = start() + close(lastItemStatus(finish))
      const output = items.map(({ item }) => ({ ...item }))
      const response = responseObject(context, {
        status,
        incomplete,
        model,
        output,
        usage: responsesUsage(final.usage, final.costUsd),
      })
      completed(itemParts(output), response)
      return (
        out +
        event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response })
      )
    },
    fail(error: ServiceError, charged: Charged) {
      // The terminal state for clients that follow it (with what the delivered part is charged), then
      // the error event the SDK raises.
      const output = items.map(({ item }) => ({ ...item, status: 'incomplete' }) as OutputItem)
      const usage = responsesUsage(charged.usage, charged.costUsd)
      const response = {
        ...responseObject(context, { status: 'failed', model, output, usage }),
        error: { code: error.code, message: error.message },
      }
      return (
        event('response.failed', { response }) +
        event('error', {
          code: error.code,
          message: error.message,
          param: error.details.param ?? null,
        })
      )
    },
  }
}
