/**
 * Opening a ticket: a subject, the message, and optionally the request it is about (prefilled when the
 * user came from a request's "Ask support"). The server checks that the request is one of the account's.
 * An empty subject or message is refused under its field before anything is sent.
 */
import { createSignal, Show } from 'solid-js'
import type { NewTicket, Ticket } from '../../../../shared/schemas/admin/support.ts'
import { api } from '../../api.ts'
import { focusFirstInvalid, refuse, useFormCheck } from '../../form-check.ts'
import { Field, TextField, fieldError, formError, useSubmit } from '../../forms.tsx'
import { Button, Card, ErrorNotice } from '../../ui.tsx'

export function NewTicketForm(props: {
  requestId: string
  opened: (ticket: Ticket) => void
  cancel: () => void
}) {
  const [subject, setSubject] = createSignal(
    props.requestId ? `About request ${props.requestId}` : '',
  )
  const [body, setBody] = createSignal('')
  const [requestId, setRequestId] = createSignal(props.requestId)
  const submit = useSubmit()
  const check = useFormCheck((field): NewTicket => {
    const ticket: NewTicket = {
      subject: field(() => filled(subject(), 'subject', 'Enter a subject.')) ?? '',
      body: field(() => filled(body(), 'body', 'Write your message.')) ?? '',
    }
    if (requestId().trim()) ticket.requestId = requestId().trim()
    return ticket
  })
  /** A field's problem: the form's own check first, then the server's refusal. */
  const error = (param: string) => check.error(param) ?? fieldError(submit.error(), param)
  const send = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const ticket = check.take()
    if (!ticket) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const opened = await submit.run(() => api<Ticket>('POST', '/support/tickets', ticket))
    if (opened) props.opened(opened)
    else focusFirstInvalid(form)
  }
  const otherError = () => formError(submit.error(), FIELDS)
  return (
    <Card title="New ticket">
      <form class="stack" onSubmit={send} novalidate>
        <TextField
          label="Subject"
          name="subject"
          required
          maxLength={200}
          value={subject()}
          onValue={setSubject}
          error={error('subject')}
        />
        <Field
          label="Message"
          error={error('body')}
          hint="What happened, what you expected, and anything that helps us reproduce it."
        >
          {(id, describedBy) => (
            <textarea
              id={id}
              name="body"
              rows={6}
              required
              maxLength={20_000}
              aria-describedby={describedBy()}
              aria-invalid={error('body') ? 'true' : undefined}
              value={body()}
              onInput={(event) => setBody(event.currentTarget.value)}
            />
          )}
        </Field>
        <TextField
          label="Request ID (optional)"
          name="requestId"
          class="mono"
          autocomplete="off"
          spellcheck={false}
          value={requestId()}
          onValue={setRequestId}
          hint="From a response's x-request-id header or the Activity page."
          error={error('requestId')}
        />
        <Show when={otherError()}>
          <ErrorNotice error={submit.error()} />
        </Show>
        <div class="row">
          <Button type="submit" variant="primary" busy={submit.busy()}>
            Send
          </Button>
          <Button variant="ghost" onClick={props.cancel}>
            Cancel
          </Button>
        </div>
      </form>
    </Card>
  )
}

const FIELDS = ['subject', 'body', 'requestId'] as const

/** The text without its surrounding spaces; refused under its field when nothing is left. */
function filled(text: string, param: string, message: string): string {
  const trimmed = text.trim()
  if (!trimmed) throw refuse(param, message)
  return trimmed
}
