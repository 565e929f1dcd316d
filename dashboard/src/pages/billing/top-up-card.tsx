/**
 * Adding credit. The server decides who may (the owner; an accountless account once both secrets are
 * confirmed saved; not while suspended) and says why not: the reason stands next to the disabled button.
 * On a server that takes cards the owner enters an amount and goes to Stripe's Checkout page; the credit
 * appears once Stripe confirms the payment (the payments card lists it). Elsewhere the step answers with
 * instructions to ask the operator.
 */
import { createSignal, createUniqueId, Show } from 'solid-js'
import { useSearchParams } from '@solidjs/router'
import type { TopUp } from '../../../../shared/schemas/admin/billing.ts'
import { usdToNano } from '../../../../shared/money.ts'
import { api } from '../../api.ts'
import { getBilling } from '../../data.ts'
import { fieldError, TextField, useSubmit } from '../../forms.tsx'
import { createOptional } from '../../reading.ts'
import { Badge, Button, Card, CopyButton, ErrorNotice, Notice } from '../../ui.tsx'

export function TopUpCard() {
  const reasonId = createUniqueId()
  const submit = useSubmit()
  const [search] = useSearchParams()
  const [answer, setAnswer] = createSignal<TopUp>()
  const [amount, setAmount] = createSignal('')
  // Whether this session may top up comes with the balance; the balance card shows that read's states.
  const billing = createOptional(() => getBilling())
  const topUp = () => billing.latest()?.topUp
  const card = () => topUp()?.card
  const start = async () => {
    const body = card() ? { amountNano: usdToNano(amount().trim()) ?? -1 } : undefined
    const result = await submit.run(() => api<TopUp>('POST', '/billing/top-up', body))
    if (!result) return
    if (result.method === 'card') window.location.assign(result.url)
    else setAnswer(result)
  }
  return (
    <Card title="Add credit" actions={<Badge>Owner only</Badge>}>
      <Show when={search.checkout === 'success'}>
        <Notice title="Payment sent">
          <p>
            The credit appears here once the card payment is confirmed, usually within a minute.
          </p>
        </Notice>
      </Show>
      <Show when={card()}>
        {(bounds) => (
          <TextField
            label="Amount (USD)"
            inputmode="decimal"
            placeholder={bounds().minUsd}
            hint={`Between USD ${bounds().minUsd} and ${bounds().maxUsd}, paid by card.`}
            error={fieldError(submit.error(), 'amountNano')}
            value={amount()}
            onValue={setAmount}
            disabled={!topUp()?.allowed}
          />
        )}
      </Show>
      <div class="row center">
        <Button
          variant="primary"
          busy={submit.busy()}
          disabled={!topUp()?.allowed}
          aria-describedby={topUp()?.reason ? reasonId : undefined}
          onClick={start}
        >
          {card() ? 'Pay by card' : 'Top up'}
        </Button>
        <Show when={topUp()?.reason}>
          <p class="small muted reason" id={reasonId}>
            {topUp()!.reason}
          </p>
        </Show>
      </div>
      <Show when={submit.error() && !fieldError(submit.error(), 'amountNano')}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <Show when={answer()?.method === 'operator' && answer()}>
        {(result) => (
          <Notice title="How to add credit">
            <p>
              {result().method === 'operator'
                ? (result() as { instructions: string }).instructions
                : ''}
            </p>
            <div class="row center">
              <span class="small">
                Account ID <code class="mono">{result().accountId}</code>
              </span>
              <CopyButton text={result().accountId} label="Copy account ID" variant="secondary" />
            </div>
          </Notice>
        )}
      </Show>
    </Card>
  )
}
