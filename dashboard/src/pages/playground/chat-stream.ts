/**
 * Reading a Chat Completions event stream as the playground receives it (fetch + ReadableStream, since
 * EventSource cannot POST): text deltas as they arrive, then the model, the cost from the final usage
 * chunk (`usage.cost`, USD) and how the stream ended. An error event mid-stream becomes an ApiError with
 * the error table's code and the server's message.
 */
import { ApiError } from '../../api.ts'

export type StreamEnd = {
  /** The model that answered, as the chunks name it. */
  model: string | null
  /** USD, from the usage chunk; null when the stream carried none. */
  cost: number | null
  /** `complete`: `[DONE]` arrived; `failed`: an error event or a cut connection; `stopped`: the reader was aborted. */
  outcome: 'complete' | 'failed' | 'stopped'
  failure: ApiError | null
}

type Chunk = {
  model?: string
  choices?: { delta?: { content?: string | null } }[]
  usage?: { cost?: number } | null
  error?: { code?: string | null; message?: string; param?: string | null }
}

export async function readChatStream(
  body: ReadableStream<Uint8Array>,
  onText: (text: string) => void,
  status = 200,
): Promise<StreamEnd> {
  const end: StreamEnd = { model: null, cost: null, outcome: 'failed', failure: null }
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let boundary: RegExpExecArray | null
      while ((boundary = /\r?\n\r?\n/.exec(buffer))) {
        const event = buffer.slice(0, boundary.index)
        buffer = buffer.slice(boundary.index + boundary[0].length)
        const data = eventData(event)
        if (data === undefined) continue
        if (data === '[DONE]') {
          end.outcome = end.failure ? 'failed' : 'complete'
          return end
        }
        read(data, end, onText, status)
      }
    }
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') {
      end.outcome = 'stopped'
      return end
    }
    end.failure ??= new ApiError(
      0,
      'network',
      'The connection broke before the answer was complete.',
    )
    return end
  } finally {
    reader.releaseLock()
  }
  end.failure ??= new ApiError(0, 'network', 'The answer ended before it was complete.')
  return end
}

/** The data of one server-sent event (its `data:` lines joined), or undefined for a comment or empty event. */
function eventData(event: string): string | undefined {
  const lines = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
  return lines.length ? lines.join('\n') : undefined
}

function read(data: string, end: StreamEnd, onText: (text: string) => void, status: number): void {
  let chunk: Chunk
  try {
    chunk = JSON.parse(data) as Chunk
  } catch {
    return
  }
  if (chunk.error) {
    end.failure = new ApiError(
      status,
      chunk.error.code ?? 'internal_error',
      chunk.error.message ?? 'The answer failed.',
      chunk.error.param ?? null,
    )
    return
  }
  if (chunk.model) end.model = chunk.model
  const text = chunk.choices?.[0]?.delta?.content
  if (text) onText(text)
  if (typeof chunk.usage?.cost === 'number') end.cost = chunk.usage.cost
}
