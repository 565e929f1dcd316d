/**
 * One ticket: its conversation with support (operator answers included) and a reply box. A reply
 * reopens an answered or closed ticket. Answers arrive by e-mail too; Refresh shows new ones here. An
 * empty reply is refused under its field before anything is sent.
 */
import { createAsyncStore, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type { Ticket, TicketStatus } from '../../../../shared/schemas/admin/support.ts'
import { api } from '../../api.ts'
import { getTicket } from '../../data.ts'
import { dateTime, relative } from '../../format.ts'
import { focusFirstInvalid, refuse, useFormCheck } from '../../form-check.ts'
import { Field, fieldError, formError, useSubmit } from '../../forms.tsx'
import { createRefresh } from '../../reading.ts'
import { Badge, Button, Card, CopyButton, ErrorNotice, Loaded, announce } from '../../ui.tsx'

export const STATUS: Record<
  TicketStatus,
  { label: string; tone: 'good' | 'warn' | 'neutral'; explain: string }
> = {
  open: { label: 'Open', tone: 'warn', explain: 'Waiting for support to answer.' },
  answered: {
    label: 'Answered',
    tone: 'good',
    explain: 'Support answered: reply if you need more.',
  },
  closed: { label: 'Closed', tone: 'neutral', explain: 'Closed. A reply opens it again.' },
}

export function TicketView(props: {
  ticketId: string
  changed: () => void
  /** The conversation's heading, each time it is drawn. */
  headingRef?: (heading: HTMLHeadingElement) => void
}) {
  // Reconciled: a refresh or a reply adds the new messages to the same card, so a half-written reply
  // and the focused button stay as they are.
  const ticket = createAsyncStore(() => getTicket(props.ticketId), { reconcile: { key: 'id' } })
  const refresh = createRefresh(getTicket.key)
  return (
    <Loaded data={ticket} retry={refresh.run}>
      {(current) => (
        <Card
          title={current.subject}
          class="ticket"
          headingRef={props.headingRef}
          actions={
            <Button variant="ghost" busy={refresh.busy()} onClick={() => void refresh.run()}>
              Refresh
            </Button>
          }
        >
          <p class="small muted">
            <Badge tone={STATUS[current.status].tone}>{STATUS[current.status].label}</Badge>{' '}
            {STATUS[current.status].explain} Opened {dateTime(current.createdAt)}.
          </p>
          <Show when={current.requestId}>
            {(requestId) => (
              <div class="row center tight small">
                About request <code class="mono">{requestId()}</code>
                <CopyButton
                  text={requestId()}
                  label={`Copy request ID ${requestId()}`}
                  variant="ghost"
                />
              </div>
            )}
          </Show>
          <ol class="conversation" aria-label="Conversation">
            <For each={current.messages}>
              {(message) => (
                <li class={`message ${message.author}`}>
                  <div class="message-meta small">
                    <strong>{message.author === 'operator' ? 'Support' : 'You'}</strong>{' '}
                    <time datetime={message.createdAt} title={dateTime(message.createdAt)}>
                      {relative(message.createdAt)}
                    </time>
                  </div>
                  <div class="message-body">{message.body}</div>
                </li>
              )}
            </For>
          </ol>
          <ReplyForm
            ticketId={current.id}
            replied={() => {
              void revalidate(getTicket.key)
              props.changed()
            }}
          />
        </Card>
      )}
    </Loaded>
  )
}

function ReplyForm(props: { ticketId: string; replied: () => void }) {
  const [body, setBody] = createSignal('')
  const submit = useSubmit()
  const check = useFormCheck((field) =>
    field(() => {
      const text = body().trim()
      if (!text) throw refuse('body', 'Write your reply.')
      return text
    }),
  )
  /** The reply's problem: the form's own check first, then the server's refusal. */
  const error = () => check.error('body') ?? fieldError(submit.error(), 'body')
  const send = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const text = check.take()
    if (!text) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const next = await submit.run(() =>
      api<Ticket>('POST', `/support/tickets/${encodeURIComponent(props.ticketId)}/messages`, {
        body: text,
      }),
    )
    if (!next) return focusFirstInvalid(form)
    setBody('')
    check.reset()
    props.replied()
    announce('Reply sent.')
  }
  return (
    <form class="stack" onSubmit={send} novalidate>
      <Field label="Your reply" error={error()}>
        {(id, describedBy) => (
          <textarea
            id={id}
            name="reply"
            rows={4}
            required
            maxLength={20_000}
            aria-describedby={describedBy()}
            aria-invalid={error() ? 'true' : undefined}
            value={body()}
            onInput={(event) => setBody(event.currentTarget.value)}
          />
        )}
      </Field>
      <Show when={formError(submit.error(), ['body'])}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <div class="row">
        <Button type="submit" variant="primary" busy={submit.busy()}>
          Reply
        </Button>
      </div>
    </form>
  )
}
