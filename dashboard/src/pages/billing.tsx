/**
 * Billing: the balance and what requests in progress hold, adding credit, the ledger, and credit alerts.
 * Money is shown as the server's decimal USD strings; nothing here computes with it.
 */
import { createResource } from 'solid-js'
import type { Billing as BillingView } from '../../../shared/schemas/admin/billing.ts'
import { get } from '../api.ts'
import { Page } from '../ui.tsx'
import { AlertsCard } from './billing/alerts-card.tsx'
import { BalanceCard } from './billing/balance-card.tsx'
import { LedgerCard } from './billing/ledger-card.tsx'
import { TopUpCard } from './billing/top-up-card.tsx'

export default function Billing() {
  const [billing, { refetch }] = createResource(() => get<BillingView>('/billing'))
  return (
    <Page title="Billing" description="Your balance, credit added and spent, and alerts before it runs low.">
      <div class="billing-top">
        <BalanceCard billing={billing} refetch={() => void refetch()} />
        <TopUpCard billing={billing} />
      </div>
      <LedgerCard />
      <AlertsCard />
    </Page>
  )
}
