/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Billing() {
  return (
    <Page title="Billing">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
