/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Guardrails() {
  return (
    <Page title="Guardrails">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
