/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Team() {
  return (
    <Page title="Team">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
