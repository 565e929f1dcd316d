/**
 * The dashboard's only way to the server: the admin API under /admin/v1, same origin, the session in
 * its HttpOnly cookie. A refusal becomes an ApiError carrying the error table's code, the server's
 * message (it names the field or rule) and the words a person understands (shared/error-words.ts).
 */
import { errorWords } from '../../shared/error-words.ts'
import type { ErrorCode } from '../../shared/errors.ts'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message)
  }

  /** A short title for the refusal; the message says the details. */
  get title(): string {
    return errorWords[this.code as ErrorCode] ?? 'Something went wrong'
  }
}

type ErrorBody = { error?: { code?: string; message?: string; param?: string | null } }

/** Listeners told when the session ended (any 401): the shell sends the user to sign in. */
const signedOut = new Set<() => void>()
export function onSignedOut(listener: () => void): () => void {
  signedOut.add(listener)
  return () => signedOut.delete(listener)
}

export async function request(
  method: string,
  path: string,
  body?: unknown,
  init: { signal?: AbortSignal } = {},
): Promise<Response> {
  let response: Response
  try {
    response = await fetch(`/admin/v1${path}`, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: init.signal,
    })
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error
    throw new ApiError(
      0,
      'network',
      'The server could not be reached. Check your connection and try again.',
    )
  }
  if (response.ok) return response
  const parsed = (await response.json().catch(() => ({}))) as ErrorBody
  const code = parsed.error?.code ?? 'internal_error'
  if (
    response.status === 401 &&
    !path.startsWith('/auth/') &&
    !path.startsWith('/session/link') &&
    !path.startsWith('/setup')
  ) {
    for (const listener of signedOut) listener()
  }
  throw new ApiError(
    response.status,
    code,
    parsed.error?.message ?? `The server answered ${response.status}.`,
    parsed.error?.param ?? null,
  )
}

/** A JSON call: the parsed answer, or a thrown ApiError. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await request(method, path, body)
  return (await response.json()) as T
}

export const get = <T>(path: string) => api<T>('GET', path)

/** A query string from the defined, non-empty values. */
export function queryString(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(values))
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}
