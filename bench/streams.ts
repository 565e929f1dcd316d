/**
 * The streaming measurements beside the load cells: the time to the first byte of a stream (one
 * request at a time, direct, through the bare proxy and through the gateway), and the resident memory an
 * open stream costs a proxy process (many streams held open at once against a slow provider).
 *
 * The open streams use raw sockets: a Bun process's fetch keeps at most BUN_CONFIG_MAX_HTTP_REQUESTS
 * requests in flight, and this client must not be the limit being measured.
 */
import { processMemory } from './proc.ts'
import type { Probe } from './checks.ts'

export type FirstByte = { p50Us: number; p99Us: number; samples: number }

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** Times `count` streamed requests one after another, from sending to the first body bytes. */
export async function measureFirstByte(
  probe: Probe,
  count: number,
  warmup: number,
): Promise<FirstByte> {
  const samples: number[] = []
  for (let index = 0; index < warmup + count; index++) {
    const started = performance.now()
    const response = await fetch(probe.url, {
      method: 'POST',
      body: probe.body,
      headers: probe.headers,
    })
    const reader = response.body!.getReader()
    const first = await reader.read()
    const elapsedUs = (performance.now() - started) * 1000
    if (response.status !== 200 || first.done)
      throw new Error(`first-byte probe to ${probe.url}: status ${response.status}`)
    while (!(await reader.read()).done) {
      // The rest of the stream, read to its end so the next request starts clean.
    }
    if (index >= warmup) samples.push(elapsedUs)
  }
  samples.sort((a, b) => a - b)
  return {
    p50Us: percentile(samples, 0.5),
    p99Us: percentile(samples, 0.99),
    samples: samples.length,
  }
}

/** Resident memory of a process, in bytes (Linux /proc). */
export async function residentBytes(pid: number): Promise<number> {
  const { rssKb } = await processMemory(pid)
  if (!Number.isFinite(rssKb)) throw new Error(`no VmRSS for process ${pid}`)
  return rssKb * 1024
}

export type OpenStreams = {
  streams: number
  beforeBytes: number
  openBytes: number
  perStreamBytes: number
  completed: number
}

/**
 * Opens `count` streamed requests at once, waits until every one has begun (the proxy answered after the
 * provider's first bytes), samples the proxy's resident memory with all of them open, then reads them all
 * to their end. The provider writes each event on its own, slowly, so the streams stay open meanwhile.
 */
export async function measureOpenStreams(
  probe: Probe,
  count: number,
  pid: number,
  settleMs: number,
): Promise<OpenStreams> {
  const beforeBytes = await residentBytes(pid)
  const streams = await Promise.all(Array.from({ length: count }, () => openStream(probe)))
  try {
    await Promise.all(streams.map((stream) => stream.begun))
    await Bun.sleep(settleMs)
    const openBytes = await residentBytes(pid)
    const ends = await Promise.all(streams.map((stream) => stream.ended))
    return {
      streams: count,
      beforeBytes,
      openBytes,
      perStreamBytes: (openBytes - beforeBytes) / count,
      completed: ends.filter(Boolean).length,
    }
  } finally {
    for (const stream of streams) stream.close()
  }
}

type RawStream = { begun: Promise<void>; ended: Promise<boolean>; close(): void }

/** One streamed POST over its own socket; `ended` says whether the stream closed with `data: [DONE]`. */
async function openStream(probe: Probe): Promise<RawStream> {
  const { hostname, port, pathname } = new URL(probe.url)
  let tail = ''
  let begun = false
  const signals = Promise.withResolvers<void>()
  const done = Promise.withResolvers<boolean>()
  const decoder = new TextDecoder()
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, data) {
        tail += decoder.decode(data)
        if (!begun && tail.includes('\r\n\r\n')) {
          begun = true
          if (!tail.startsWith('HTTP/1.1 200'))
            signals.reject(new Error(`open stream: ${tail.split('\r\n')[0]}`))
          else signals.resolve()
        }
        // Only the end of what arrived is kept: the stream is read, not stored.
        if (begun) tail = tail.slice(-256)
      },
      close() {
        if (!begun) signals.reject(new Error('open stream: closed before the response began'))
        done.resolve(tail.includes('data: [DONE]'))
      },
      error(_socket, error) {
        signals.reject(error)
        done.resolve(false)
      },
    },
  })
  const headers = {
    ...probe.headers,
    host: `${hostname}:${port}`,
    'content-length': String(Buffer.byteLength(probe.body)),
    connection: 'close',
  }
  socket.write(
    `POST ${pathname} HTTP/1.1\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n')}\r\n\r\n${probe.body}`,
  )
  return { begun: signals.promise, ended: done.promise, close: () => socket.end() }
}
