/**
 * Writes ledger and request-log rows to Postgres in batches, off the request path: one multi-row INSERT
 * per table per flush, idempotent by request ID (and kind), so a retried batch or a recovered outbox
 * entry never writes a row twice. Ledger rows stay queued until Postgres has them; then their outbox
 * entries in the admission store are acknowledged.
 */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../admission/store.ts'
import { log } from '../log/log.ts'
import type { LedgerRow, RequestLogRow } from './rows.ts'

const MAX_BATCH = 2_000
/** Past this many queued request-log rows (Postgres unreachable for long), the oldest are dropped. */
const MAX_QUEUED_LOGS = 200_000

export class RecordWriter {
  private ledger: LedgerRow[] = []
  private logs: RequestLogRow[] = []
  private lastUsed = new Map<string, number>()
  private timer: Timer | undefined
  private flushing: Promise<void> | undefined
  /** Failures are logged once per streak, not on every retry. */
  private failing = false

  constructor(
    private readonly sql: Sql,
    private readonly store: AdmissionStore,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs)
  }

  addLedger(rows: LedgerRow[]): void {
    this.ledger.push(...rows)
  }

  addRequestLog(row: RequestLogRow): void {
    this.logs.push(row)
    if (this.logs.length > MAX_QUEUED_LOGS) this.logs.splice(0, this.logs.length - MAX_QUEUED_LOGS)
    const last = this.lastUsed.get(row.keyId) ?? 0
    if (row.startedAtMs > last) this.lastUsed.set(row.keyId, row.startedAtMs)
  }

  get pending(): number {
    return this.ledger.length + this.logs.length
  }

  /** Writes what is queued; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.flushing ??= this.writeQueued().finally(() => (this.flushing = undefined))
    return this.flushing
  }

  /** Flushes until the queue is empty (or Postgres keeps failing); used at shutdown and by tests. */
  async drain(): Promise<void> {
    for (let round = 0; round < 50 && (this.pending > 0 || this.flushing); round++) {
      await this.flush()
      if (this.pending > 0) await Bun.sleep(20)
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.drain()
  }

  private failed(what: string, rows: number, error: unknown): void {
    if (!this.failing) log.error(`${what} write failed; retrying until Postgres accepts it`, { rows, error })
    this.failing = true
  }

  private async writeQueued(): Promise<void> {
    while (this.ledger.length > 0) {
      const batch = this.ledger.slice(0, MAX_BATCH)
      try {
        await insertLedger(this.sql, batch)
      } catch (error) {
        this.failed('ledger', batch.length, error)
        return
      }
      this.ledger.splice(0, batch.length)
      const settled = [...new Map(batch.map((row) => [row.requestId, row])).values()]
      await this.store.ackLedger(settled).catch((error) => {
        log.warn('outbox acknowledgement failed; recovery will retry it', { error })
      })
    }
    while (this.logs.length > 0) {
      const batch = this.logs.slice(0, MAX_BATCH)
      try {
        await insertRequestLogs(this.sql, batch)
      } catch (error) {
        this.failed('request log', batch.length, error)
        return
      }
      this.logs.splice(0, batch.length)
    }
    if (this.failing) log.info('record writes recovered')
    this.failing = false
    if (this.lastUsed.size > 0) {
      const used = this.lastUsed
      this.lastUsed = new Map()
      await this.sql`
        UPDATE api_keys SET last_used_at = u.at
        FROM unnest(${[...used.keys()]}::text[], ${[...used.values()].map((ms) => new Date(ms).toISOString())}::timestamptz[]) AS u(id, at)
        WHERE api_keys.id = u.id AND (last_used_at IS NULL OR last_used_at < u.at)`.catch((error) => {
        log.warn('last-used update failed', { error })
      })
    }
  }
}

export async function insertLedger(sql: Sql, rows: LedgerRow[]): Promise<void> {
  if (rows.length === 0) return
  const records = rows.map((row) => ({
    account_id: row.accountId,
    key_id: row.keyId,
    request_id: row.requestId,
    kind: row.kind,
    amount_nano: row.amountNano,
    written_off_nano: row.writtenOffNano,
    reason: row.reason,
    created_at: new Date(row.atMs).toISOString(),
  }))
  await sql`
    INSERT INTO ledger (account_id, key_id, request_id, kind, amount_nano, written_off_nano, reason, created_at)
    SELECT account_id, key_id, request_id, kind, amount_nano, written_off_nano, reason, created_at
    FROM jsonb_populate_recordset(NULL::ledger, ${sql.json(records)})
    ON CONFLICT (request_id, kind) DO NOTHING`
}

async function insertRequestLogs(sql: Sql, rows: RequestLogRow[]): Promise<void> {
  const records = rows.map((row) => ({
    request_id: row.requestId,
    account_id: row.accountId,
    key_id: row.keyId,
    api_style: row.apiStyle,
    model: row.model,
    served_model: row.servedModel,
    provider: row.provider,
    stream: row.stream,
    status: row.status,
    error_code: row.errorCode,
    input_tokens: row.inputTokens,
    cached_tokens: row.cachedTokens,
    output_tokens: row.outputTokens,
    cost_nano: row.costNano,
    charged_nano: row.chargedNano,
    latency_ms: row.latencyMs,
    first_byte_ms: row.firstByteMs,
    started_at: new Date(row.startedAtMs).toISOString(),
    finished_at: new Date(row.finishedAtMs).toISOString(),
  }))
  await sql`
    INSERT INTO request_logs SELECT * FROM jsonb_populate_recordset(NULL::request_logs, ${sql.json(records)})
    ON CONFLICT (request_id) DO NOTHING`
}
