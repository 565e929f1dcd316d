/**
 * A streamed HTTP/1.1 request over a raw socket, for tests that hold more requests open at once than a
 * process's fetch allows (Bun keeps at most 256 in flight unless BUN_CONFIG_MAX_HTTP_REQUESTS says more).
 */
import type { Socket } from 'bun'

export type RawStream = {
  /** Resolves with the status line and headers once the response has begun. */
  head: Promise<string>
  close(): void
}

export async function openRawStream(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<RawStream> {
  const { hostname, port } = new URL(url)
  let received = ''
  let resolveHead: (head: string) => void = () => {}
  let rejectHead: (error: Error) => void = () => {}
  const head = new Promise<string>((resolve, reject) => {
    resolveHead = resolve
    rejectHead = reject
  })
  const socket: Socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, data) {
        received += new TextDecoder().decode(data)
        const end = received.indexOf('\r\n\r\n')
        if (end !== -1) resolveHead(received.slice(0, end))
      },
      close() {
        rejectHead(new Error(`connection closed before the response began: ${received}`))
      },
      error(_socket, error) {
        rejectHead(error)
      },
    },
  })
  const bytes = Buffer.byteLength(body)
  const lines = Object.entries({
    ...headers,
    host: `${hostname}:${port}`,
    'content-length': String(bytes),
    connection: 'close',
  }).map(([name, value]) => `${name}: ${value}`)
  socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`)
  return { head, close: () => socket.end() }
}
