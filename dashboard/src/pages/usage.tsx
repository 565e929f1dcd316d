/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Usage() {
  return (
    <Page title="Usage">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
