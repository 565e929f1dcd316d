/** The first page after sign-in: money, the last 24 hours, and where to go next. */
import { A, createAsync, revalidate } from '@solidjs/router'
import { Show } from 'solid-js'
import { getActivitySummary, getBilling, getKeys } from '../data.ts'
import { count, counted, usd } from '../format.ts'
import { useAbilities, useSession } from '../session.tsx'
import { Card, Loaded, Page } from '../ui.tsx'

export default function Overview() {
  const { me } = useSession()
  const can = useAbilities()
  const billing = createAsync(() => getBilling())
  const summary = createAsync(() => getActivitySummary())
  const keys = createAsync(() => getKeys())
  // Suggested only once the keys are read and none can be used (setup and sign-up may have made one).
  const noUsableKey = () =>
    keys()?.keys.every((key) => key.status !== 'active' && key.status !== 'in_grace') ?? false
  return (
    <Page title="Overview" description={`Account ${me().account.id}, signed in as ${me().role}.`}>
      <div class="grid">
        <Card title="Balance">
          <Loaded data={billing} retry={() => revalidate(getBilling.key)}>
            {(money) => (
              <div class="stack">
                <div class="stat">
                  <span class="label">Available</span>
                  <span class="value">{usd(money.availableUsd)}</span>
                </div>
                <span class="small muted">
                  {usd(money.balanceUsd)} balance, {usd(money.heldUsd)} held by requests in progress
                </span>
                <A href="/dashboard/billing">Billing and top-up</A>
              </div>
            )}
          </Loaded>
        </Card>
        <Card title="Last 24 hours">
          <Loaded data={summary} retry={() => revalidate(getActivitySummary.key)}>
            {(day) => (
              <div class="stack">
                <div class="stat">
                  <span class="label">Requests</span>
                  <span class="value">{count(day.totals.requests)}</span>
                </div>
                <span class="small muted">
                  {usd(day.totals.chargedUsd)} spent, {counted(day.totals.errors, 'error')},{' '}
                  {counted(day.totals.inputTokens + day.totals.outputTokens, 'token')}
                </span>
                <A href="/dashboard/activity">See activity</A>
              </div>
            )}
          </Loaded>
        </Card>
        <Card title="Next steps">
          <ul class="stack" style={{ margin: 0, 'padding-left': '1.1rem' }}>
            <Show when={can().manage && noUsableKey()}>
              <li>
                <A href="/dashboard/keys">Create an API key</A>
              </li>
            </Show>
            <li>
              <A href="/dashboard/playground">Try a model in the playground</A>
            </li>
            <li>
              <A href="/dashboard/usage">See usage by day, model and key</A>
            </li>
          </ul>
        </Card>
      </div>
    </Page>
  )
}
