/**
 * Where a user goes after signing in (`next`): a page of this site's dashboard, never another site. The
 * dashboard reads it from `/sign-in?next=…`, and an e-mailed sign-in link carries it to the confirm
 * page, so the same rule is kept on both sides.
 */
const MAX_LENGTH = 512

/** The path when it is a dashboard page (`/dashboard`, `/dashboard/…`, with a query), else undefined. */
export function dashboardPath(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > MAX_LENGTH) return undefined
  // No backslash or control character: some browsers read `\` as `/`, which could make `//host`.
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return undefined
  return /^\/dashboard(?:[/?#]|$)/.test(next) && !next.startsWith('//') ? next : undefined
}
