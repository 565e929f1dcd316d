/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Support() {
  return (
    <Page title="Support">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
