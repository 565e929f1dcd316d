/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Presets() {
  return (
    <Page title="Presets">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
