/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Setup() {
  return (
    <Page title="Setup">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
