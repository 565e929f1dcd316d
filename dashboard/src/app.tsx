/** The dashboard shell. Pages (keys, billing, activity, usage, …) are added behind this frame. */
export function App() {
  return (
    <main style={{ 'font-family': 'system-ui, sans-serif', margin: '4rem auto', 'max-width': '40rem', padding: '0 1rem' }}>
      <h1>Model Gateway</h1>
      <p>
        The dashboard is on its way. Until then, operators manage accounts, credits and keys with <code>bun run admin</code>, and
        clients call the API at <code>/v1</code> of the API server.
      </p>
    </main>
  )
}
