/** Any address the dashboard does not know. */
import { A } from '@solidjs/router'

export default function NotFound() {
  return (
    <main class="public" id="main">
      <section class="card" aria-labelledby="not-found-title">
        <h1 id="not-found-title">Page not found</h1>
        <p class="muted">There is nothing at this address.</p>
        <A href="/dashboard">Go to the dashboard</A>
      </section>
    </main>
  )
}
