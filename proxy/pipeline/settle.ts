/**
 * Stage 10: every admitted request ends its hold exactly once: settled with the cost of what was
 * delivered, or released when nothing was. The store call is retried (it is idempotent by request ID)
 * for a few minutes; if the store stays unreachable the hold expires at its deadline and charges nothing.
 * Then the ledger rows and the request-log row go to the batched writer (stage 11).
 */
import type { AdmissionStore, SettleResult } from '../stores/admission/store.ts'
import type { TokenUsage } from '../core/catalog/pricing.ts'
import type { RecordWriter } from '../stores/ledger/record-writer.ts'
import type { LedgerRow, RequestLogRow } from '../stores/ledger/rows.ts'
import { log, logs } from '../core/log.ts'
import type { Call } from '../core/call.ts'
import type { Inflight } from './inflight.ts'
import { recordRequest } from '../core/metrics.ts'

export type SettleDeps = { store: AdmissionStore; writer: RecordWriter; inflight: Inflight }

export type Settlement =
  | { kind: 'release' }
  | { kind: 'charge'; usage: TokenUsage; costNano: number; forgive: boolean; reason?: string }

const RETRY_DELAYS_MS = [50, 200, 1_000, 5_000, 15_000, 30_000, 60_000, 120_000]

/** Ends the call's hold (if it has one) and records the request. Never throws. */
export async function finishCall(
  deps: SettleDeps,
  call: Call,
  settlement: Settlement,
): Promise<void> {
  const held = call.admitted
  try {
    await endHold(deps, call, settlement)
  } finally {
    // The request leaves the in-flight list only once its hold has ended and its rows are queued:
    // shutdown waits for the list to empty before it flushes the writer and closes the stores.
    if (held) deps.inflight.delete(call.requestId)
  }
}

async function endHold(deps: SettleDeps, call: Call, settlement: Settlement): Promise<void> {
  let row: RequestLogRow | undefined
  if (call.admitted) {
    call.admitted = false
    const accountId = call.key!.accountId
    if (settlement.kind === 'release') {
      await retrying(call, () => deps.store.release(accountId, call.requestId))
    } else {
      call.usage = settlement.usage
      call.costNano = settlement.costNano
      // The log row goes into the outbox with the charge (which sets its charged amount there).
      row = requestLogRow(call)
      const record = JSON.stringify(row)
      const result = await retrying(call, () =>
        deps.store.settle({
          requestId: call.requestId,
          accountId,
          costNano: settlement.costNano,
          tokens: settlement.usage.inputTokens + settlement.usage.outputTokens,
          forgive: settlement.forgive,
          record,
        }),
      )
      if (result?.status === 'settled' && result.recorded && !(await result.recorded)) {
        // The charge never reached the shared store (it stopped answering until the process closed).
        deps.writer.addLedger(ledgerRows(call, { status: 'missing', availableNano: 0 }))
      } else if (result) deps.writer.addLedger(ledgerRows(call, result, settlement.reason))
      row.chargedNano = call.chargedNano
    }
  }
  recordCall(call)
  if (!call.key) return
  row ??= requestLogRow(call)
  deps.writer.addRequestLog(row)
  if (logs('debug')) log.debug('request', { ...row, keyPrefix: call.key.prefix })
}

async function retrying<T>(call: Call, operation: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation()
    } catch (error) {
      const delay = RETRY_DELAYS_MS[attempt]
      if (delay === undefined) {
        log.error('hold could not be ended; it expires at its deadline', {
          requestId: call.requestId,
          error,
        })
        return undefined
      }
      log.warn('admission store call failed; retrying', {
        requestId: call.requestId,
        attempt,
        error,
      })
      await Bun.sleep(delay)
    }
  }
}

function ledgerRows(call: Call, result: SettleResult, reason?: string): LedgerRow[] {
  const base = {
    accountId: call.key!.accountId,
    keyId: call.key!.id,
    requestId: call.requestId,
    atMs: Date.now(),
  }
  if (result.status !== 'settled') {
    // The hold ended before the charge arrived (it expired): the cost is the service's, on record.
    call.chargedNano = 0
    if (call.costNano === 0) return []
    return [
      {
        ...base,
        kind: 'writeoff',
        amountNano: 0,
        writtenOffNano: call.costNano,
        reason: `hold_${result.status}`,
      },
    ]
  }
  call.chargedNano = result.chargedNano
  const rows: LedgerRow[] = []
  if (result.chargedNano > 0)
    rows.push({
      ...base,
      kind: 'charge',
      amountNano: -result.chargedNano,
      writtenOffNano: 0,
      reason: null,
    })
  if (result.writtenOffNano > 0) {
    const why = reason ?? (result.chargedNano > 0 ? 'cost_above_hold' : 'forgiven')
    rows.push({
      ...base,
      kind: 'writeoff',
      amountNano: 0,
      writtenOffNano: result.writtenOffNano,
      reason: why,
    })
  }
  return rows
}

function requestLogRow(call: Call): RequestLogRow {
  const finishedAtMs = Date.now()
  return {
    requestId: call.requestId,
    accountId: call.key!.accountId,
    keyId: call.key!.id,
    apiStyle: call.style,
    model: call.requestedModel ?? null,
    servedModel: call.served?.model.id ?? null,
    provider: call.served?.route.provider.id ?? null,
    stream: call.stream,
    status: call.status ?? 200,
    errorCode: call.errorCode ?? null,
    inputTokens: call.usage?.inputTokens ?? 0,
    cachedTokens: call.usage?.cachedInputTokens ?? 0,
    outputTokens: call.usage?.outputTokens ?? 0,
    costNano: call.costNano,
    chargedNano: call.chargedNano,
    latencyMs: Math.round(performance.now() - call.startedAt),
    firstByteMs: call.firstByteMs ?? null,
    redactions: call.redactions ?? null,
    startedAtMs: call.startedAtMs,
    finishedAtMs,
  }
}

/** The request in the metrics: the model and provider that served (or the model asked for). */
export function recordCall(call: Call): void {
  recordRequest({
    style: call.style,
    model: call.served?.model.id ?? call.requestedModel ?? '',
    provider: call.served?.route.provider.id ?? '',
    status: call.status ?? 200,
    code: call.errorCode,
    latencyMs: performance.now() - call.startedAt,
    firstByteMs: call.firstByteMs,
  })
}
