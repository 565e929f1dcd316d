/**
 * Support: the account's tickets with their status, one ticket's conversation, and a form to open a new
 * one, optionally about a request (`?requestId=` from Activity opens the form with it filled in). The
 * open ticket is in the address (`?ticket=`), so a refresh or a shared link shows it again.
 */
import { createAsync, revalidate, useSearchParams } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type { Ticket } from '../../../shared/schemas/admin/support.ts'
import { getTickets } from '../data.ts'
import { relative } from '../format.ts'
import { useSession } from '../session.tsx'
import { Badge, Button, Card, Empty, Loaded, Page, announce } from '../ui.tsx'
import { NewTicketForm } from './support/new-ticket-form.tsx'
import { STATUS, TicketView } from './support/ticket-view.tsx'

export default function Support() {
  const { me } = useSession()
  const [params, setParams] = useSearchParams()
  const param = (name: string) => {
    const raw = params[name]
    return (Array.isArray(raw) ? raw[0] : raw) ?? ''
  }
  const [composing, setComposing] = createSignal(param('requestId') !== '')
  const tickets = createAsync(() => getTickets())
  const reread = () => revalidate(getTickets.key)
  // Closing the form (sent or cancelled) removes the focused control: the focus returns to its button.
  let newTicket: HTMLButtonElement | undefined
  const close = () => {
    setComposing(false)
    newTicket?.focus()
  }
  // A ticket chosen in the list takes the focus once it is drawn: on a phone it is below the list, out
  // of sight, and a screen reader goes on to it. Once only: a refresh or a reply leaves the focus alone.
  let chosen = false
  const focusChosen = (heading: HTMLHeadingElement) => {
    if (!chosen) return
    chosen = false
    queueMicrotask(() => heading.focus())
  }
  const opened = (ticket: Ticket) => {
    close()
    setParams({ requestId: null, ticket: ticket.id })
    // Answers are mailed to whoever opened the ticket, when they have an address: a dashboard link's
    // session (an accountless account) or a wallet has none.
    announce(`Ticket sent. Support answers here${me().user?.email ? ' and by e-mail' : ''}.`)
    void reread()
  }
  return (
    <Page
      title="Support"
      description="Ask about a request, your balance or anything else. Quote a request ID when a request went wrong: it lets support find exactly what happened."
      actions={
        <Button
          ref={(element) => (newTicket = element)}
          variant="primary"
          aria-expanded={composing()}
          onClick={() => setComposing(!composing())}
        >
          New ticket
        </Button>
      }
    >
      <Show when={composing()}>
        <NewTicketForm
          requestId={param('requestId')}
          opened={opened}
          cancel={() => {
            close()
            setParams({ requestId: null })
          }}
        />
      </Show>
      <div class="support-layout">
        <Card title="Your tickets">
          <Loaded data={tickets} retry={reread}>
            {(list) => (
              <Show
                when={list.length > 0}
                fallback={<Empty title="No tickets yet">Open one with New ticket.</Empty>}
              >
                <ul class="ticket-list">
                  <For each={list}>
                    {(ticket) => (
                      <li>
                        <a
                          href={`/dashboard/support?ticket=${encodeURIComponent(ticket.id)}`}
                          aria-current={param('ticket') === ticket.id ? 'true' : undefined}
                          onClick={(event) => {
                            event.preventDefault()
                            chosen = param('ticket') !== ticket.id
                            setParams({ ticket: ticket.id, requestId: null })
                          }}
                        >
                          <span class="ticket-subject">{ticket.subject}</span>
                          <span class="small muted">
                            <Badge tone={STATUS[ticket.status].tone}>
                              {STATUS[ticket.status].label}
                            </Badge>{' '}
                            updated {relative(ticket.updatedAt)}
                          </span>
                        </a>
                      </li>
                    )}
                  </For>
                </ul>
              </Show>
            )}
          </Loaded>
        </Card>
        <Show
          when={param('ticket')}
          keyed
          fallback={
            <p class="muted support-hint">Choose a ticket to read the conversation and reply.</p>
          }
        >
          {(ticketId) => (
            <TicketView
              ticketId={ticketId}
              changed={() => void reread()}
              headingRef={focusChosen}
            />
          )}
        </Show>
      </div>
    </Page>
  )
}
