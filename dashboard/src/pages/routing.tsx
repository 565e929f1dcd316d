/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Routing() {
  return (
    <Page title="Routing">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
