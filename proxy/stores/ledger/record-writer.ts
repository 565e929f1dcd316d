/**
 * Writes ledger and request-log rows to Postgres in batches, off the request path: one INSERT per table
 * per flush (one array parameter per column, unnested), idempotent by request ID (and kind), so a
 * retried batch or a recovered outbox entry never writes a row twice. Ledger rows stay queued until
 * Postgres has them; their outbox entries in the admission store (which also hold the requests' log
 * rows) are acknowledged once Postgres has the request-log rows queued with them as well. The hourly usage rollup is kept in the same statement
 * as the request-log insert (usage-rollup.ts).
 */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../admission/store.ts'
import { log } from '../../core/log.ts'
import type { LedgerRow, RequestLogRow } from './rows.ts'
import { rollUpAdded } from './usage-rollup.ts'

const MAX_BATCH = 2_000
/** Past this many queued request-log rows (Postgres unreachable for long), the oldest are dropped. */
const MAX_QUEUED_LOGS = 200_000

export class RecordWriter {
  private ledger: LedgerRow[] = []
  private logs: RequestLogRow[] = []
  /** Ledger rows written whose request-log rows Postgres did not take yet. */
  private unacknowledged: LedgerRow[] = []
  private lastUsed = new Map<string, number>()
  private timer: Timer | undefined
  private flushing: Promise<void> | undefined
  /** Failures are logged once per streak, not on every retry. */
  private failing = false
  /**
   * Called with the accounts whose charges Postgres has just committed (off the request path): the
   * credit alerts compare their live balances with their thresholds there.
   */
  onCharged?: (accountIds: string[]) => void

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

  /**
   * Writes the rows a queue held when the flush began, in batches, oldest first; a batch leaves the queue
   * only once Postgres has it. Rows queued meanwhile wait for the next flush: under steady load the
   * ledger queue is never empty, and writing on until it is would keep the request log from ever being
   * written (its queue growing with every request until the oldest rows are dropped).
   */
  private async writeBatches<Row>(
    what: string,
    queue: Row[],
    insert: (batch: Row[]) => Promise<void>,
  ): Promise<boolean> {
    for (let left = queue.length; left > 0; ) {
      const batch = queue.slice(0, Math.min(MAX_BATCH, left))
      left -= batch.length
      try {
        await insert(batch)
      } catch (error) {
        if (!this.failing)
          log.error(`${what} write failed; retrying until Postgres accepts it`, {
            rows: batch.length,
            error,
          })
        this.failing = true
        return false
      }
      queue.splice(0, batch.length)
    }
    return true
  }

  private async writeQueued(): Promise<void> {
    const written: LedgerRow[] = []
    const ledgerWritten = await this.writeBatches('ledger', this.ledger, async (batch) => {
      await insertLedger(this.sql, batch)
      written.push(...batch)
      this.reportCharged(batch)
    })
    // A request's log row is queued with (or before) its ledger rows, so it is in this flush's logs.
    const logsWritten =
      ledgerWritten &&
      (await this.writeBatches('request log', this.logs, (batch) =>
        insertRequestLogs(this.sql, batch),
      ))
    if (logsWritten) await this.acknowledge(written)
    else this.unacknowledged.push(...written)
    if (!logsWritten) return
    if (this.failing) log.info('record writes recovered')
    this.failing = false
    if (this.lastUsed.size > 0) {
      const used = this.lastUsed
      this.lastUsed = new Map()
      await this.sql`
        UPDATE api_keys SET last_used_at = u.at
        FROM (SELECT id, to_timestamp(ms / 1000.0) AS at FROM unnest(${[...used.keys()]}::text[], ${[...used.values()]}::bigint[]) AS u(id, ms)) u
        WHERE api_keys.id = u.id AND (last_used_at IS NULL OR last_used_at < u.at)`.catch(
        (error) => {
          log.warn('last-used update failed', { error })
        },
      )
    }
  }

  /** Postgres has these charges and their requests' log rows now: their outbox entries can go. */
  private async acknowledge(written: LedgerRow[]): Promise<void> {
    const rows = this.unacknowledged.length > 0 ? [...this.unacknowledged, ...written] : written
    this.unacknowledged = []
    if (rows.length === 0) return
    await this.store
      .ackLedger(rows)
      .catch((error) =>
        log.warn('outbox acknowledgement failed; recovery will retry it', { error }),
      )
  }

  private reportCharged(batch: LedgerRow[]): void {
    if (!this.onCharged) return
    const accounts = new Set(
      batch.filter((row) => row.kind === 'charge').map((row) => row.accountId),
    )
    if (accounts.size === 0) return
    try {
      this.onCharged([...accounts])
    } catch (error) {
      log.warn('charge listener failed', { error })
    }
  }
}

export async function insertLedger(sql: Sql, rows: LedgerRow[]): Promise<void> {
  if (rows.length === 0) return
  const column = <T>(pick: (row: LedgerRow) => T) => rows.map(pick)
  await sql`
    INSERT INTO ledger (account_id, key_id, request_id, kind, amount_nano, written_off_nano, reason, created_at)
    SELECT account_id, key_id, request_id, kind, amount_nano, written_off_nano, reason, to_timestamp(at_ms / 1000.0)
    FROM unnest(
      ${column((row) => row.accountId)}::text[], ${column((row) => row.keyId)}::text[], ${column((row) => row.requestId)}::text[],
      ${column((row) => row.kind)}::text[], ${column((row) => row.amountNano)}::bigint[], ${column((row) => row.writtenOffNano)}::bigint[],
      ${column((row) => row.reason)}::text[], ${column((row) => row.atMs)}::bigint[]
    ) AS r(account_id, key_id, request_id, kind, amount_nano, written_off_nano, reason, at_ms)
    ON CONFLICT (request_id, kind) DO NOTHING`
}

/** The log's counts are 4-byte integers: a count beyond them is written as their largest, never refused. */
const INT4_MAX = 2_147_483_647
const int4 = (value: number | null): number | null =>
  value === null ? null : Math.max(-INT4_MAX, Math.min(INT4_MAX, value))

/**
 * Inserts the rows not yet in the log and adds those it inserted to the hourly rollup, in one statement
 * (one round trip, atomic): a request ID already logged, or twice in the batch, is counted once. A row
 * Postgres would refuse would hold back every row after it, in the writer and in outbox recovery alike.
 */
export async function insertRequestLogs(sql: Sql, rows: RequestLogRow[]): Promise<void> {
  if (rows.length === 0) return
  const column = <T>(pick: (row: RequestLogRow) => T) => rows.map(pick)
  await sql`
    WITH added AS (
    INSERT INTO request_logs (request_id, account_id, key_id, api_style, model, served_model, provider, stream, status,
      error_code, input_tokens, cached_tokens, output_tokens, cost_nano, charged_nano, latency_ms, first_byte_ms,
      guardrail_redactions, started_at, finished_at)
    SELECT request_id, account_id, key_id, api_style, model, served_model, provider, stream = 1, status,
      error_code, input_tokens, cached_tokens, output_tokens, cost_nano, charged_nano, latency_ms, first_byte_ms,
      redactions, to_timestamp(started_ms / 1000.0), to_timestamp(finished_ms / 1000.0)
    FROM unnest(
      ${column((row) => row.requestId)}::text[], ${column((row) => row.accountId)}::text[], ${column((row) => row.keyId)}::text[],
      ${column((row) => row.apiStyle)}::text[], ${column((row) => row.model)}::text[], ${column((row) => row.servedModel)}::text[],
      ${column((row) => row.provider)}::text[], ${column((row) => (row.stream ? 1 : 0))}::smallint[], ${column((row) => int4(row.status))}::integer[],
      ${column((row) => row.errorCode)}::text[], ${column((row) => int4(row.inputTokens))}::integer[], ${column((row) => int4(row.cachedTokens))}::integer[],
      ${column((row) => int4(row.outputTokens))}::integer[], ${column((row) => row.costNano)}::bigint[], ${column((row) => row.chargedNano)}::bigint[],
      ${column((row) => int4(row.latencyMs))}::integer[], ${column((row) => int4(row.firstByteMs))}::integer[], ${column((row) => row.redactions)}::text[],
      ${column((row) => row.startedAtMs)}::bigint[], ${column((row) => row.finishedAtMs)}::bigint[]
    ) AS r(request_id, account_id, key_id, api_style, model, served_model, provider, stream, status, error_code,
      input_tokens, cached_tokens, output_tokens, cost_nano, charged_nano, latency_ms, first_byte_ms, redactions, started_ms, finished_ms)
    ON CONFLICT (request_id) DO NOTHING
    RETURNING account_id, started_at, key_id, served_model, model, status, input_tokens, output_tokens, cost_nano, charged_nano
    )
    ${rollUpAdded(sql)}`
}
