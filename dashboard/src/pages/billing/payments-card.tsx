/**
 * The account's payments (card top-ups) and their states. A payment becomes "credited" when the
 * provider confirms it, which can take a moment after the owner comes back from the payment page: while
 * one is pending the list is read again every few seconds, for a minute at most.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createEffect, For, onCleanup, Show } from 'solid-js'
import type { Payments } from '../../../../shared/schemas/admin/billing.ts'
import { getBilling, getPayments } from '../../data.ts'
import { dateTime, usd } from '../../format.ts'
import { createRefresh } from '../../reading.ts'
import { Badge, Card, Loaded, RefreshButton } from '../../ui.tsx'

type State = Payments['payments'][number]['state']

const STATES: Record<State, { label: string; tone: 'good' | 'warn' | 'bad' | 'neutral' }> = {
  pending: { label: 'Pending', tone: 'neutral' },
  credited: { label: 'Credited', tone: 'good' },
  failed: { label: 'Failed', tone: 'bad' },
  reversed: { label: 'Refunded', tone: 'warn' },
  held: { label: 'Held for review', tone: 'warn' },
}

const POLL_MS = 3_000
const POLL_FOR_MS = 60_000

export function PaymentsCard() {
  const payments = createAsync(() => getPayments())
  const refresh = createRefresh([getPayments.key, getBilling.key])
  const started = Date.now()
  /** The payments last read; undefined while none are in or when the read failed (the card shows why). */
  const latest = () => {
    try {
      return payments.latest
    } catch {
      return undefined
    }
  }
  createEffect(() => {
    const pending = latest()?.payments.some((payment) => payment.state === 'pending')
    if (!pending || Date.now() - started > POLL_FOR_MS) return
    const timer = setTimeout(() => void revalidate([getPayments.key, getBilling.key]), POLL_MS)
    onCleanup(() => clearTimeout(timer))
  })
  return (
    <Card title="Payments" actions={<RefreshButton refresh={refresh} />}>
      <Loaded data={payments} retry={refresh.run}>
        {(answer) => (
          <Show
            when={answer.payments.length > 0}
            fallback={<p class="small muted">No payments yet.</p>}
          >
            <div class="table-wrap">
              <table class="narrow-cards">
                <thead>
                  <tr>
                    <th scope="col">Date</th>
                    <th scope="col">Method</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  <For each={answer.payments}>
                    {(payment) => (
                      <tr>
                        <td data-label="Date">{dateTime(payment.createdAt)}</td>
                        <td data-label="Method">
                          {payment.provider === 'stripe' ? 'Card' : 'Deposit'}
                        </td>
                        <td class="num" data-label="Amount">
                          {usd(payment.amountUsd)}
                        </td>
                        <td data-label="State">
                          <Badge tone={STATES[payment.state].tone}>
                            {STATES[payment.state].label}
                          </Badge>
                        </td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            </div>
          </Show>
        )}
      </Loaded>
    </Card>
  )
}
