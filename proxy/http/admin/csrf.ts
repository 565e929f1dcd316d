/**
 * Cross-site request checks for the site's state-changing requests (cookies are sent with them): a
 * browser's `Sec-Fetch-Site` must say same-origin (or none: typed into the address bar); otherwise the
 * `Origin` must be the site's own or one of the configured dashboard origins. A write with neither header
 * is refused: every browser sends `Origin` on a cross-origin or fetch POST.
 */
import { ServiceError } from '../../../shared/errors.ts'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

export function checkOrigin(
  request: Request,
  allowedOrigins: ReadonlySet<string>,
): ServiceError | undefined {
  if (SAFE.has(request.method)) return undefined
  const site = request.headers.get('sec-fetch-site')
  const origin = request.headers.get('origin')
  if (origin && (origin === new URL(request.url).origin || allowedOrigins.has(origin)))
    return undefined
  // Under the site's `Referrer-Policy: no-referrer`, browsers send `Origin: null` on same-origin form POSTs
  // (and Firefox on same-origin fetches): Sec-Fetch-Site, which a page cannot forge, then vouches for it.
  if ((!origin || origin === 'null') && (site === 'same-origin' || site === 'none'))
    return undefined
  return new ServiceError(
    'forbidden',
    'Cross-site request refused: send it from the dashboard (Origin header not allowed).',
  )
}
