/**
 * The fake provider's streamed answer: the planned events written the way the wire options say
 * (wire.ts), with the failures plan.ts names (break, errorAfter, stall, dropFirst), counted in the
 * server's state while they are open and when the gateway leaves early.
 */
import { anthropicStreamError } from './anthropic.ts'
import { openaiStreamError, type Step } from './openai.ts'
import { wireOf, WireWriter } from './wire.ts'

export type StreamCounts = { openStreams: number; abortedStreams: number }

export function streamResponse(
  steps: Step[],
  options: URLSearchParams,
  anthropic: boolean,
  counts: StreamCounts,
): Response {
  const failAfter = options.has('break')
    ? Number(options.get('break'))
    : options.has('errorAfter')
      ? Number(options.get('errorAfter'))
      : -1
  const chunkDelay = Number(options.get('chunkDelay') ?? 0)
  const wire = wireOf(options)
  let cancelled = false

  const write = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (options.has('dropFirst')) return controller.error(new Error('fake connection drop'))
    const writer = new WireWriter(controller, wire, () => cancelled)
    let content = 0
    let events = 0
    for (const step of steps) {
      if (cancelled) return
      if (options.has('stall') && events === 1) {
        await writer.flush()
        while (!cancelled) await Bun.sleep(20)
        return
      }
      if (step.content && content === failAfter) {
        if (options.has('errorAfter')) {
          await writer.event(anthropic ? anthropicStreamError() : openaiStreamError())
          await writer.flush()
          return controller.close()
        }
        // Let what was sent leave first.
        await writer.flush()
        await writer.taken()
        return controller.error(new Error('fake connection drop'))
      }
      if (step.content) content += 1
      if (!step.text.startsWith(':')) events += 1
      if (chunkDelay && step.content) await Bun.sleep(chunkDelay)
      await writer.event(step.text)
    }
    await writer.flush()
    if (!cancelled) controller.close()
  }

  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      counts.openStreams += 1
      try {
        await write(controller)
      } finally {
        counts.openStreams -= 1
      }
    },
    cancel() {
      cancelled = true
      counts.abortedStreams += 1
    },
  })
  return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
}
