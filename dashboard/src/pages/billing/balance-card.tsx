/**
 * The balance as the admission store holds it: what new requests can use (available), the balance, and
 * what requests in progress hold, by key. Holds end within moments of a request (charged or released), so
 * the card offers a Refresh rather than polling.
 */
import { createAsync } from '@solidjs/router'
import { For, Show } from 'solid-js'
import { getBilling } from '../../data.ts'
import { count, usd } from '../../format.ts'
import { createRefresh } from '../../reading.ts'
import { Card, Loaded, RefreshButton } from '../../ui.tsx'

export function BalanceCard() {
  const billing = createAsync(() => getBilling())
  const refresh = createRefresh(getBilling.key)
  return (
    <Card title="Balance" actions={<RefreshButton refresh={refresh} />}>
      <Loaded data={billing} retry={refresh.run}>
        {(money) => (
          <div class="stack">
            <div class="grid stats">
              <div class="stat">
                <span class="label">Available</span>
                <span class="value">{usd(money.availableUsd)}</span>
                <span class="small muted">
                  What new requests can use: the balance minus open holds.
                </span>
              </div>
              <div class="stat">
                <span class="label">Balance</span>
                <span class="value">{usd(money.balanceUsd)}</span>
                <span class="small muted">Credits minus charges.</span>
              </div>
              <div class="stat">
                <span class="label">Held</span>
                <span class="value">{usd(money.heldUsd)}</span>
                <span class="small muted">
                  {money.inFlight === 1
                    ? '1 request in progress'
                    : `${count(money.inFlight)} requests in progress`}
                </span>
              </div>
            </div>
            <Show
              when={money.holds.length > 0}
              fallback={<p class="small muted">No requests in progress: nothing is held.</p>}
            >
              <p class="small muted">
                Each request in progress holds its worst-case cost until it ends; it is then charged
                what it used and the rest is released.
              </p>
              <div class="table-wrap">
                <table>
                  <caption class="visually-hidden">Open holds by key</caption>
                  <thead>
                    <tr>
                      <th scope="col">Key</th>
                      <th scope="col" class="num">
                        Requests in progress
                      </th>
                      <th scope="col" class="num">
                        Held
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    <For each={money.holds}>
                      {(hold) => (
                        <tr>
                          <td>
                            {hold.name || 'Unnamed key'}{' '}
                            <span class="mono small muted">
                              {hold.prefix ? `${hold.prefix}…` : hold.keyId}
                            </span>
                          </td>
                          <td class="num">{count(hold.inFlight)}</td>
                          <td class="num">{usd(hold.heldUsd)}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
              </div>
            </Show>
          </div>
        )}
      </Loaded>
    </Card>
  )
}
