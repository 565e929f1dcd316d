/** The client address of a request, for the per-address limits. */

/** The client's address as the server saw it. */
export function clientAddress(server: { requestIP(request: Request): { address: string } | null } | null, request: Request): string {
  return server?.requestIP(request)?.address ?? 'unknown'
}
