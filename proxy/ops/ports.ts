/**
 * Refusing a port another process listens on. The servers bind with SO_REUSEPORT (the site server by
 * Elysia's default, the API server for its WORKERS), which lets a second gateway bind the same port as
 * a running one without an error: the kernel would then hand each of them part of the connections, the
 * operator's commands and the dashboard's included, each to its own database. A probe bound without
 * SO_REUSEPORT fails on a port in use, whoever holds it.
 */

import { ConfigError } from '../core/config.ts'

export class PortInUseError extends Error {
  readonly code = 'EADDRINUSE'
}

/**
 * Throws PortInUseError, naming the port and its setting, when `port` is taken (0 picks a free one); a
 * ConfigError naming HOST when nothing can listen at that address.
 */
export function ensurePortFree(hostname: string, port: number, setting: string): void {
  try {
    Bun.listen({ hostname, port, socket: { data() {} } }).stop(true)
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE')
      throw new ConfigError(
        `HOST (${hostname}) cannot be listened on: ${(error as Error).message}. Set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 to serve other hosts).`,
      )
    throw new PortInUseError(`Port ${port} (${setting}) is in use by another process.`)
  }
}
