/**
 * The site's public address, for the links the service hands out (dashboard link, e-mailed links) and
 * for the domain and URI a Sign-In with Ethereum message must name: PUBLIC_SITE_URL when set, else the
 * origin the request came to.
 */
export function siteBase(publicSiteUrl: string, request: Request): string {
  return (publicSiteUrl || new URL(request.url).origin).replace(/\/+$/, '')
}

/** The dashboard link of an accountless account: the secret in the fragment, which browsers never send. */
export function dashboardLink(base: string, secret: string): string {
  return `${base}/dashboard#link=${secret}`
}

/** The confirm page of an e-mailed link (sign-in, claim or invite), with the dashboard page to land on. */
export function emailLink(base: string, token: string, next?: string): string {
  const link = `${base}/auth/email?token=${encodeURIComponent(token)}`
  return next ? `${link}&next=${encodeURIComponent(next)}` : link
}

/**
 * The site's address as seen from the API server (for links in claim mails and the SIWE domain of a
 * claim): PUBLIC_SITE_URL when set, else the API request's host on the site port (both servers bind the
 * same HOST). Behind a proxy, set PUBLIC_SITE_URL.
 */
export function siteBaseFromApi(
  config: { PUBLIC_SITE_URL: string; SITE_PORT: number },
  request: Request,
): string {
  if (config.PUBLIC_SITE_URL) return config.PUBLIC_SITE_URL.replace(/\/+$/, '')
  const url = new URL(request.url)
  return `${url.protocol}//${url.hostname}:${config.SITE_PORT}`
}

/** The domain (host) and origin a Sign-In with Ethereum message for this base must name. */
export function siweSite(base: string): { domain: string; origin: string } {
  const url = new URL(base)
  return { domain: url.host, origin: url.origin }
}
