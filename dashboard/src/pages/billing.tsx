/**
 * Billing: the balance and what requests in progress hold, adding credit, payments, the ledger, and credit
 * alerts.
 * Money is shown as the server's decimal USD strings; nothing here computes with it. Each card reads its
 * own queries (the route's preload started them).
 */
import { Page } from '../ui.tsx'
import { AlertsCard } from './billing/alerts-card.tsx'
import { BalanceCard } from './billing/balance-card.tsx'
import { DepositCard } from './billing/deposit-card.tsx'
import { LedgerCard } from './billing/ledger-card.tsx'
import { PaymentsCard } from './billing/payments-card.tsx'
import { TopUpCard } from './billing/top-up-card.tsx'

export default function Billing() {
  return (
    <Page
      title="Billing"
      description="Your balance, credit added and spent, and alerts before it runs low."
    >
      <div class="billing-top">
        <BalanceCard />
        <TopUpCard />
      </div>
      <DepositCard />
      <PaymentsCard />
      <LedgerCard />
      <AlertsCard />
    </Page>
  )
}
