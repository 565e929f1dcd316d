/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Playground() {
  return (
    <Page title="Playground">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
