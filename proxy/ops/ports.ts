/**
 * Refusing a port another process listens on. The servers bind with SO_REUSEPORT (the site server by
 * Elysia's default, the API server for its WORKERS), which lets a second gateway bind the same port as
 * a running one without an error: the kernel would then hand each of them part of the connections, the
 * operator's commands and the dashboard's included, each to its own database. A probe bound without
 * SO_REUSEPORT fails on a port in use, whoever holds it.
 */

export class PortInUseError extends Error {
  readonly code = 'EADDRINUSE'
}

/** Throws PortInUseError, naming the port and its setting, when `port` is taken (0 picks a free one). */
export function ensurePortFree(hostname: string, port: number, setting: string): void {
  if (port === 0) return
  try {
    Bun.listen({ hostname, port, socket: { data() {} } }).stop(true)
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
    throw new PortInUseError(`Port ${port} (${setting}) is in use by another process.`)
  }
}
