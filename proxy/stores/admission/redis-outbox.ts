/**
 * The outbox of the Redis admission store: each account's hash of charges Redis took whose ledger rows
 * Postgres may not have yet (a settle or lease charge writes the entry in the same script call). The
 * record writer acknowledges entries once Postgres has them; recovery writes the ones left behind by a
 * process that stopped, and leaves a mark for each (see `markRecovered`).
 */
import { redisKeys } from './redis-keys.ts'
import { parseOutboxEntry } from './redis-replies.ts'
import type { RedisClient } from '../redis-client.ts'
import type { LedgerEntry } from './store.ts'

/**
 * An outbox entry recovery wrote to Postgres is kept this long as a mark (its value starts with
 * RECOVERED_MARK), so a charge its process sends again after a lost answer is taken once. Shorter than
 * KEEP_AFTER_DEADLINE_MS, so the sweep still visits the account when the mark is to go.
 */
const RECOVERED_KEPT_MS = 30 * 60_000
const RECOVERED_MARK = '~'

/**
 * The entries of every active account older than `olderThanMs` at `nowMs` (Redis's clock); also drops
 * the marks of recovered entries once they are past their keeping.
 */
export async function pendingOutbox(
  redis: RedisClient,
  nowMs: number,
  olderThanMs: number,
): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = []
  for (const accountId of await redis.zrange(redisKeys.activeAccounts, '0', '-1')) {
    const outbox = await redis.hgetall(redisKeys.outbox(accountId))
    const spent: string[] = []
    for (const [requestId, value] of Object.entries(outbox)) {
      const recovered = value.startsWith(RECOVERED_MARK)
      const entry = parseOutboxEntry(accountId, requestId, recovered ? value.slice(1) : value)
      if (!entry) continue
      if (!recovered && entry.atMs <= nowMs - olderThanMs) entries.push(entry)
      if (recovered && entry.atMs <= nowMs - RECOVERED_KEPT_MS) spent.push(requestId)
    }
    if (spent.length > 0) await redis.hdel(redisKeys.outbox(accountId), ...spent)
  }
  return entries
}

/** Postgres has these entries' rows: they leave the outbox. */
export async function ackOutbox(
  redis: RedisClient,
  entries: { accountId: string; requestId: string }[],
): Promise<void> {
  const byAccount = new Map<string, string[]>()
  for (const entry of entries) {
    const ids = byAccount.get(entry.accountId) ?? []
    ids.push(entry.requestId)
    byAccount.set(entry.accountId, ids)
  }
  await Promise.all(
    [...byAccount].map(([accountId, ids]) => redis.hdel(redisKeys.outbox(accountId), ...ids)),
  )
}

/**
 * Recovery wrote these entries to Postgres: each stays as a mark that keeps what the scripts read of an
 * entry (key, amounts, time), so a settle sent again answers with the charge taken and a lease charge
 * sent again is skipped. The request's log row is not kept.
 */
export async function markRecovered(redis: RedisClient, entries: LedgerEntry[]): Promise<void> {
  await Promise.all(
    entries.map((entry) =>
      redis.hset(
        redisKeys.outbox(entry.accountId),
        entry.requestId,
        `${RECOVERED_MARK}${entry.keyId}|${entry.chargedNano}|${entry.writtenOffNano}|${entry.atMs}|`,
      ),
    ),
  )
}
