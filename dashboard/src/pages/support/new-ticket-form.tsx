/**
 * Opening a ticket: a subject, the message, and optionally the request it is about (prefilled when the
 * user came from a request's "Ask support"). The server checks that the request is one of the account's.
 */
import { createSignal, Show } from 'solid-js'
import type { NewTicket, Ticket } from '../../../../shared/schemas/admin/support.ts'
import { api } from '../../api.ts'
import { Field, TextField, fieldError, useSubmit } from '../../forms.tsx'
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
  const send = async (event: SubmitEvent) => {
    event.preventDefault()
    const ticket: NewTicket = { subject: subject().trim(), body: body().trim() }
    if (requestId().trim()) ticket.requestId = requestId().trim()
    const opened = await submit.run(() => api<Ticket>('POST', '/support/tickets', ticket))
    if (opened) props.opened(opened)
  }
  const otherError = () =>
    submit.error() &&
    !['subject', 'body', 'requestId'].some((param) => fieldError(submit.error(), param))
  return (
    <Card title="New ticket">
      <form class="stack" onSubmit={send}>
        <TextField
          label="Subject"
          name="subject"
          required
          maxLength={200}
          value={subject()}
          onValue={setSubject}
          error={fieldError(submit.error(), 'subject')}
        />
        <Field
          label="Message"
          error={fieldError(submit.error(), 'body')}
          hint="What happened, what you expected, and anything that helps us reproduce it."
        >
          {(id, describedBy) => (
            <textarea
              id={id}
              name="body"
              rows={6}
              required
              maxLength={20_000}
              aria-describedby={describedBy}
              aria-invalid={fieldError(submit.error(), 'body') ? 'true' : undefined}
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
          error={fieldError(submit.error(), 'requestId')}
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
