/**
 * The playground's conversation: the turns shown, one request at a time (a second send while one runs is
 * ignored; the page disables it too), the answer streamed into its turn as it arrives, and a refusal
 * before any answer kept apart so the page can show it and give the message back to the composer.
 */
import { createSignal } from 'solid-js'
import { createStore, produce } from 'solid-js/store'
import type {
  PlaygroundChat,
  PlaygroundMessage,
} from '../../../../shared/schemas/admin/playground.ts'
import { request, type ApiError } from '../../api.ts'
import { readChatStream, type StreamEnd } from './chat-stream.ts'

export type Turn = {
  id: number
  role: 'user' | 'assistant'
  content: string
  paid: boolean
  model: string | null
  /** USD from the usage chunk; null while streaming or when not reported. */
  cost: number | null
  state: 'streaming' | StreamEnd['outcome']
  failure: ApiError | null
}

export type Outgoing = { text: string; paid: boolean; model: string | null; system: string }

/** How a send ended: answered (fully or not), refused before any answer, or stopped by the user. */
export type SendResult =
  | { kind: 'answered'; end: StreamEnd }
  | { kind: 'refused'; error: unknown }
  | { kind: 'stopped' }
  | { kind: 'busy' }

export function createConversation() {
  const [turns, setTurns] = createStore<Turn[]>([])
  const [busy, setBusy] = createSignal(false)
  const [refusal, setRefusal] = createSignal<unknown>()
  let controller: AbortController | undefined
  let nextId = 1

  const turn = (role: Turn['role'], content: string, paid: boolean): Turn => ({
    id: nextId++,
    role,
    content,
    paid,
    model: null,
    cost: null,
    state: role === 'user' ? 'complete' : 'streaming',
    failure: null,
  })

  /** What the model is sent: the system prompt, then every message that was sent or answered. */
  const history = (system: string): PlaygroundMessage[] => [
    ...(system.trim() ? [{ role: 'system' as const, content: system.trim() }] : []),
    ...turns
      .filter(
        (entry) => entry.role === 'user' || (entry.state !== 'failed' && entry.content !== ''),
      )
      .map((entry) => ({ role: entry.role, content: entry.content })),
  ]

  async function send(outgoing: Outgoing): Promise<SendResult> {
    if (busy()) return { kind: 'busy' }
    setBusy(true)
    setRefusal(undefined)
    const body: PlaygroundChat = {
      messages: [...history(outgoing.system), { role: 'user', content: outgoing.text }],
      stream: true,
      ...(outgoing.paid ? { paid: true, model: outgoing.model ?? undefined } : {}),
    }
    const asked = turn('user', outgoing.text, outgoing.paid)
    setTurns(turns.length, asked)
    controller = new AbortController()
    try {
      let response: Response
      try {
        response = await request('POST', '/playground/chat', body, { signal: controller.signal })
      } catch (error) {
        // Nothing was answered: the message leaves the log (the page puts it back in the composer).
        setTurns((list) => list.filter((entry) => entry.id !== asked.id))
        if (error instanceof DOMException && error.name === 'AbortError') return { kind: 'stopped' }
        setRefusal(error)
        return { kind: 'refused', error }
      }
      const answer = turn('assistant', '', outgoing.paid)
      const index = turns.length
      setTurns(index, answer)
      const end = await readChatStream(
        response.body!,
        (text) => setTurns(index, 'content', (content) => content + text),
        response.status,
      )
      setTurns(
        index,
        produce((entry) => {
          entry.state = end.outcome
          // The catalog model the gateway chose (the chunks name the provider's own model).
          entry.model = response.headers.get('x-service-model') ?? end.model
          entry.cost = end.cost
          entry.failure = end.failure
        }),
      )
      return end.outcome === 'stopped' ? { kind: 'stopped' } : { kind: 'answered', end }
    } finally {
      controller = undefined
      setBusy(false)
    }
  }

  return {
    turns,
    busy,
    /** The refusal of the last send, when it got no answer at all. */
    refusal,
    send,
    stop: () => controller?.abort(),
    clear: () => {
      setTurns([])
      setRefusal(undefined)
    },
  }
}
