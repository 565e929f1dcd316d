/**
 * The record of one request as it moves through the stages. Stages read it and return decisions; the
 * pipeline writes their results into it, and the request log is taken from it at the end.
 */
import type { ImageModel, Model, Route } from './catalog/catalog-types.ts'
import type { TokenUsage } from './catalog/pricing.ts'
import type { KeyRecord } from './key-record.ts'
import type { ErrorCode } from '../../shared/errors.ts'

/** The kind of request: a client style's model request, an image request, the catalog, or an account operation (claim, rotation). */
export type ApiStyle = 'chat' | 'messages' | 'responses' | 'images' | 'models' | 'account'

/** One model the request may be served by, with the routes to try for it. */
export type Candidate = { model: Model; routes: Route[] }

export type Call = {
  requestId: string
  style: ApiStyle
  startedAtMs: number
  startedAt: number
  key?: KeyRecord
  /** The model ID as the client sent it. */
  requestedModel?: string
  stream: boolean
  candidates: Candidate[]
  holdNano: number
  tokenEstimate: number
  /** Available balance as the last admission-store answer reported it. */
  availableNano?: number
  admitted: boolean
  served?: { model: Model | ImageModel; route: Route }
  usage?: TokenUsage
  costNano: number
  chargedNano: number
  /** What the guardrail redacted, by detector: `email=2, phone=1`. */
  redactions?: string
  firstByteMs?: number
  status?: number
  errorCode?: ErrorCode
  /** Gives back the gateway-ceiling slot; safe to call more than once. */
  releaseSlot: () => void
  /** A stream took over the slot: it is given back when the stream ends, not when the handler returns. */
  streamOwnsSlot: boolean
}

let sequence = 0

/** Request IDs are time-ordered and unique across processes: time, process-local sequence, randomness. */
export function newRequestId(): string {
  sequence = (sequence + 1) % 1_679_616
  const random = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36).padStart(7, '0')
  return `req_${Date.now().toString(36)}${sequence.toString(36).padStart(4, '0')}${random}`
}

export function newCall(style: ApiStyle): Call {
  return {
    requestId: newRequestId(),
    style,
    startedAtMs: Date.now(),
    startedAt: performance.now(),
    stream: false,
    candidates: [],
    holdNano: 0,
    tokenEstimate: 0,
    admitted: false,
    costNano: 0,
    chargedNano: 0,
    releaseSlot: () => {},
    streamOwnsSlot: false,
  }
}
