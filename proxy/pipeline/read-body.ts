/**
 * Stage 2a: the request body. At most 32 MB (spec), refused from Content-Length before reading when
 * possible, and counted while reading otherwise; then JSON, an object, nested at most MAX_DEPTH deep.
 */
import { ServiceError } from '../../shared/errors.ts'

export const MAX_BODY_BYTES = 32 * 1024 * 1024
export const MAX_DEPTH = 64

export type BodyResult =
  | { ok: true; value: Record<string, unknown>; bytes: number }
  | { ok: false; error: ServiceError }

const decoder = new TextDecoder()

const tooLarge = () =>
  new ServiceError(
    'payload_too_large',
    'Request body exceeds the 32 MB limit. Shorten the history or remove attachments.',
  )

export async function readJsonBody(request: Request): Promise<BodyResult> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > MAX_BODY_BYTES) return { ok: false, error: tooLarge() }
  const bytes = Number.isFinite(declared)
    ? new Uint8Array(await request.arrayBuffer())
    : await readLimited(request)
  if (!bytes) return { ok: false, error: tooLarge() }
  if (bytes.length > MAX_BODY_BYTES) return { ok: false, error: tooLarge() }
  let value: unknown
  try {
    value = JSON.parse(decoder.decode(bytes))
  } catch (error) {
    const message =
      error instanceof RangeError ? `nested more than ${MAX_DEPTH} levels deep` : 'not valid JSON'
    return { ok: false, error: new ServiceError('invalid_request', `Request body is ${message}.`) }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: new ServiceError('invalid_request', 'Request body must be a JSON object.'),
    }
  }
  const depthError = checkDepth(value)
  if (depthError) return { ok: false, error: depthError }
  return { ok: true, value: value as Record<string, unknown>, bytes: bytes.length }
}

/** Reads a body without Content-Length, stopping once it passes the limit. */
async function readLimited(request: Request): Promise<Uint8Array | undefined> {
  if (!request.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of request.body) {
    total += chunk.length
    if (total > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** Iterative walk: a hostile body cannot overflow the stack here. The site's bodies are held to it too. */
export function checkDepth(root: object): ServiceError | undefined {
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (depth > MAX_DEPTH) {
      return new ServiceError(
        'invalid_request',
        `Request body is nested more than ${MAX_DEPTH} levels deep.`,
      )
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return undefined
}
