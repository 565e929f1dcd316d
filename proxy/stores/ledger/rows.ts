/** Rows the hot path hands to Postgres: ledger entries (money) and request-log entries (no content). */

export type LedgerRow = {
  accountId: string
  keyId: string | null
  requestId: string
  kind: 'charge' | 'writeoff'
  amountNano: number
  writtenOffNano: number
  reason: string | null
  atMs: number
}

export type RequestLogRow = {
  requestId: string
  accountId: string
  keyId: string
  apiStyle: string
  model: string | null
  servedModel: string | null
  provider: string | null
  stream: boolean
  status: number
  errorCode: string | null
  inputTokens: number
  cachedTokens: number
  outputTokens: number
  costNano: number
  chargedNano: number
  latencyMs: number
  firstByteMs: number | null
  /** What the guardrail redacted, by detector (`email=2, phone=1`). */
  redactions: string | null
  startedAtMs: number
  finishedAtMs: number
}
