/**
 * One operator command's request to the operator API and what the command line prints for its answer:
 * the answer's JSON on success; otherwise one JSON error on stderr, the server's own or one saying what
 * to check when the server cannot be reached, does not answer in time, refuses the token or is not the
 * operator API (another service, or the gateway's API server).
 */

/** How long the command line waits for an answer before it gives up. */
export const ANSWER_TIMEOUT_MS = 30_000

export type Sent = { code: 0 | 1; stdout?: string; stderr?: string }

export async function send(
  base: string,
  token: { value: string; source: string },
  request: { method: string; path: string; body?: unknown },
  timeoutMs = ANSWER_TIMEOUT_MS,
): Promise<Sent> {
  let response: Response
  let text: string
  try {
    response = await fetch(`${base}/operator/v1${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${token.value}`, 'content-type': 'application/json' },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    })
    text = await response.text()
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    return failure(
      'unreachable',
      timedOut
        ? `No answer from ${base} within ${timeoutMs / 1000} s: is the server there stuck, or is SITE_URL another service?`
        : `No server at ${base} (${(error as Error).message}). Start it with bun run start, or set SITE_URL (or SITE_PORT) to where its site server listens.`,
    )
  }
  // Every answer of the API server carries x-request-id; the site server's never do.
  if (response.headers.has('x-request-id'))
    return failure(
      'not_operator_api',
      `${base} is the gateway's API server (PORT), not its site server, which serves the operator API: set SITE_URL (or SITE_PORT) to the site server.`,
    )
  const answer = parseJson(text)
  if (answer === undefined)
    return failure(
      'not_operator_api',
      `${base} answered ${response.status} with ${response.headers.get('content-type') ?? 'no content type'}, not the operator API: set SITE_URL (or SITE_PORT) to the gateway's site server.`,
    )
  if (response.status === 401)
    return failure(
      'unauthorized',
      `The server at ${base} refused the operator token from ${token.source}. Use the token of the server you started: set ADMIN_TOKEN, or DATA_DIR to the server's own data directory (the token is in its admin-token file).`,
    )
  if (response.ok) return { code: 0, stdout: JSON.stringify(answer, null, 2) }
  return { code: 1, stderr: text }
}

function failure(code: string, message: string): Sent {
  return { code: 1, stderr: JSON.stringify({ error: { code, message } }) }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
