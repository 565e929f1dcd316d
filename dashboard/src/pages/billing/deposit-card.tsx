/**
 * Stablecoin deposits: the account's own address (made when first shown), as text to copy and as a QR
 * code, with the chain, the accepted tokens and the confirmations a transfer waits for. Shown to whoever
 * may top up, on a server that takes deposits; the address is read only when asked for.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import { renderSVG } from 'uqr'
import { getBilling, getDeposit } from '../../data.ts'
import { createOptional } from '../../reading.ts'
import { Button, Card, CopyButton, Loaded } from '../../ui.tsx'

export function DepositCard() {
  const billing = createOptional(() => getBilling())
  const shown = () => billing.latest()?.topUp.deposits && billing.latest()?.topUp.allowed
  const [asked, setAsked] = createSignal(false)
  return (
    <Show when={shown()}>
      <Card title="Deposit stablecoins">
        <Show
          when={asked()}
          fallback={
            <div class="row center">
              <Button onClick={() => setAsked(true)}>Show deposit address</Button>
              <p class="small muted">Your account's own address; transfers to it add credit.</p>
            </div>
          }
        >
          <DepositAddress />
        </Show>
      </Card>
    </Show>
  )
}

function DepositAddress() {
  const deposit = createAsync(() => getDeposit())
  return (
    <Loaded data={deposit} retry={() => revalidate(getDeposit.key)}>
      {(answer) => (
        <div class="row">
          <img
            class="qr"
            width="160"
            height="160"
            alt="QR code of the deposit address"
            src={`data:image/svg+xml;utf8,${encodeURIComponent(
              renderSVG(`ethereum:${answer.address}@${answer.chainId}`, { pixelSize: 4 }),
            )}`}
          />
          <div class="stack">
            <p>
              Address <code class="mono">{answer.address}</code>{' '}
              <CopyButton text={answer.address} label="Copy address" variant="secondary" />
            </p>
            <p class="small">
              Chain {answer.chainId}. Accepted:{' '}
              <For each={answer.tokens}>
                {(token, index) => (
                  <>
                    {index() > 0 ? ', ' : ''}
                    {token.symbol} (<code class="mono">{token.contract}</code>)
                  </>
                )}
              </For>
              .
            </p>
            <p class="small muted">
              A transfer counts once it has {answer.confirmations} confirmations. Send only the
              listed tokens on this chain: anything else is not credited.
            </p>
          </div>
        </div>
      )}
    </Loaded>
  )
}
