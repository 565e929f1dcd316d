/** Placeholder until the page lands. */
import { Page } from '../ui.tsx'

export default function Keys() {
  return (
    <Page title="Keys">
      <p class="muted">Coming soon.</p>
    </Page>
  )
}
