/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Activity() {
  return (
    <Page title="Activity">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
