/**
 * The floor for any Bun proxy: every request is forwarded to the upstream with `fetch`, and the
 * response body is streamed back as it arrives. No parsing, no auth, no accounting.
 *
 * Run as a process: `bun bench/bare-proxy.ts <port> <upstream origin>`.
 */

/** Starts the pass-through proxy on `port`, forwarding to `upstream` (e.g. "http://127.0.0.1:9000"). */
export function startBareProxy(port: number, upstream: string): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const headers: Record<string, string> = {}
      for (const name of ['content-type', 'accept', 'authorization']) {
        const value = request.headers.get(name)
        if (value !== null) headers[name] = value
      }
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
      const response = await fetch(`${upstream}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: hasBody ? await request.arrayBuffer() : undefined,
        signal: request.signal,
      })
      return new Response(response.body, { status: response.status, headers: response.headers })
    },
  })
}

if (import.meta.main) {
  const [port = '0', upstream] = Bun.argv.slice(2)
  if (!upstream) throw new Error('usage: bun bench/bare-proxy.ts <port> <upstream origin>')
  const server = startBareProxy(Number(port), upstream.replace(/\/$/, ''))
  console.log(`bare proxy listening on ${server.url}, forwarding to ${upstream}`)
}
