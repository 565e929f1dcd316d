/**
 * The conversation as a list: the user's messages, and each answer as an article with the model that
 * wrote it and what it cost (the usage chunk's `cost`, USD). The list follows the newest text while an
 * answer streams in, unless the reader scrolled up.
 */
import { createEffect, For, Match, Show, Switch } from 'solid-js'
import { usd } from '../../format.ts'
import { Empty } from '../../ui.tsx'
import type { Turn } from './conversation.ts'

/** The smallest amount usd() shows (one nano-USD); a cost below it still says it was not zero. */
const SMALLEST_SHOWN = 0.000000001

/** "cost $0.000123", "cost less than $0.000000001", or that the cost was not reported. Display only: never summed. */
export function costText(cost: number | null): string {
  if (cost === null) return 'cost not reported yet (see Activity)'
  return `cost ${amount(cost)}`
}

function amount(cost: number): string {
  if (cost > 0 && cost < SMALLEST_SHOWN) return `less than ${usd(SMALLEST_SHOWN.toFixed(9))}`
  return usd(cost.toFixed(9))
}

export function ChatLog(props: { turns: Turn[]; freeModel: string | undefined }) {
  let log: HTMLOListElement | undefined
  let following = true
  createEffect(() => {
    const last = props.turns.at(-1)
    void last?.content
    void last?.state
    if (log && following) log.scrollTop = log.scrollHeight
  })
  const answerNumber = (turn: Turn) =>
    props.turns.filter((entry) => entry.role === 'assistant' && entry.id <= turn.id).length
  return (
    <Show
      when={props.turns.length > 0}
      fallback={
        <Empty title="No messages yet">
          Write a message below.
          <Show when={props.freeModel}> Free messages are answered by {props.freeModel}.</Show>
        </Empty>
      }
    >
      <ol
        class="chat-log"
        ref={log}
        aria-label="Conversation"
        onScroll={(event) => {
          const element = event.currentTarget
          following = element.scrollHeight - element.scrollTop - element.clientHeight < 40
        }}
      >
        <For each={props.turns}>
          {(turn) => (
            <li class={`message ${turn.role}`}>
              <Show when={turn.role === 'assistant'} fallback={<UserMessage turn={turn} />}>
                <article
                  class="bubble assistant"
                  aria-label={`Answer ${answerNumber(turn)}`}
                  aria-busy={turn.state === 'streaming' ? 'true' : undefined}
                >
                  <div class="bubble-text">
                    {turn.content}
                    <Show when={turn.state === 'streaming' && !turn.content}>
                      <span class="muted">Thinking…</span>
                    </Show>
                  </div>
                  <AnswerMeta turn={turn} />
                </article>
              </Show>
            </li>
          )}
        </For>
      </ol>
    </Show>
  )
}

function UserMessage(props: { turn: Turn }) {
  return (
    <div class="bubble user">
      <span class="visually-hidden">You: </span>
      {props.turn.content}
    </div>
  )
}

function AnswerMeta(props: { turn: Turn }) {
  const kind = () => (props.turn.paid ? 'paid' : 'free message')
  return (
    <p class="meta">
      <Switch>
        <Match when={props.turn.state === 'streaming'}>Answering…</Match>
        <Match when={props.turn.state === 'failed'}>
          <span class="answer-failure">
            {props.turn.failure?.title ?? 'The answer failed'}: {props.turn.failure?.message}
          </span>
          <Show when={props.turn.cost !== null}> · {capitalized(costText(props.turn.cost))}</Show>
        </Match>
        <Match when={true}>
          <Show when={props.turn.model}>{props.turn.model} · </Show>
          <Show when={props.turn.state === 'stopped'}>Stopped · </Show>
          {capitalized(costText(props.turn.cost))} · {kind()}
        </Match>
      </Switch>
    </p>
  )
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
