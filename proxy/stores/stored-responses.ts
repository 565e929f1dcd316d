/**
 * Stored conversations (Postgres `stored_responses`), kept `retentionDays`, of two client styles: the
 * Responses style's responses (the neutral conversation of each exchange, so that a follow-up with
 * `previous_response_id` works over a provider of any style, and the response object for retrieval) and
 * the Messages style's threads (the conversation as request fields, for a `thread` continue). The
 * conversation is opaque here; each style reads its own. A follow-up keeps only what its exchange adds,
 * under the ID of the one it continues, so a long loop keeps each turn once; a read gathers the parts
 * back to the first. Writes leave the request path; a follow-up in the same process waits for its
 * predecessor's write, and one that reaches another process first reads again for a moment before it
 * calls the conversation missing, so a client chaining requests never finds the previous one gone; a
 * retrieval, a listing of input items or a deletion of a response made within the hour does the same.
 */
import type { Sql } from 'postgres'
import { log } from '../core/log.ts'

/** The client style a stored conversation belongs to; a read finds only its own style's. */
export type StoredStyle = 'responses' | 'messages'

export type ResponseStoreOptions = {
  /** Days a response is kept; 0: none is stored. */
  retentionDays: number
  /**
   * How long a follow-up looks for a response another process may still be writing; 0 on a database only
   * this process writes (embedded): its writes in flight are awaited, and reach the database first.
   */
  followUpWaitMs: number
}

export class ResponseStore {
  private readonly pending = new Map<string, Promise<void>>()

  constructor(
    private readonly sql: Sql,
    readonly options: ResponseStoreOptions,
  ) {}

  /**
   * Keeps `part` and `response` as the JSON text they are written as (key order included). `part` is the
   * whole conversation, or with `follows` what this exchange adds to the stored conversation it
   * continues; should that one be gone by the time this is written (deleted meanwhile), the whole
   * conversation (`follows.whole`) is kept instead, so this one can still be followed up.
   */
  save(
    id: string,
    accountId: string,
    style: StoredStyle,
    part: unknown,
    response: Record<string, unknown>,
    follows?: { parentId: string; whole: () => unknown },
  ): void {
    if (this.options.retentionDays === 0) return
    const answer = JSON.stringify(response)
    const days = this.options.retentionDays
    // A provider that repeats a reply ID would have a later conversation continue an earlier one's:
    // the ID is then continued by neither.
    const write = (async () => {
      if (follows) {
        const [kept] = await this.sql`
          INSERT INTO stored_responses (id, account_id, style, conversation, response, expires_at, parent_id, root_id)
          SELECT ${id}, ${accountId}, ${style}, ${JSON.stringify(part)}::text::json, ${answer}::text::json,
                 now() + make_interval(days => ${days}), p.id, p.root_id
          FROM stored_responses p
          WHERE p.id = ${follows.parentId} AND p.account_id = ${accountId} AND p.conversation::text <> 'null'
          FOR SHARE OF p
          ON CONFLICT (id) DO UPDATE SET deleted_at = coalesce(stored_responses.deleted_at, now())
          RETURNING 1 AS kept`
        if (kept) return
      }
      await this.sql`
        INSERT INTO stored_responses (id, account_id, style, conversation, response, expires_at, parent_id, root_id)
        VALUES (${id}, ${accountId}, ${style}, ${JSON.stringify(follows ? follows.whole() : part)}::text::json,
                ${answer}::text::json, now() + make_interval(days => ${days}), NULL, ${id})
        ON CONFLICT (id) DO UPDATE SET deleted_at = coalesce(stored_responses.deleted_at, now())`
    })()
      .catch((error) => log.error('stored response not written', { responseId: id, error }))
      .finally(() => this.pending.delete(id))
    this.pending.set(id, write)
  }

  /**
   * The stored conversation of this account and style under `id`, as the parts it was saved in, the first
   * whole and each later one what its exchange added (as JSON, for the style to read); undefined when
   * there is none, or a part of it is gone. One made by another process may not be written yet when its
   * follow-up arrives: a miss is read again, sooner then later, until `followUpWaitMs` has passed.
   */
  async conversation(
    id: string,
    accountId: string,
    style: StoredStyle,
  ): Promise<unknown[] | undefined> {
    return (await this.chain(id, accountId, style, this.options.followUpWaitMs))?.map(
      (row) => row.part,
    )
  }

  /**
   * The parts of the stored conversation under `id` with the ID each was saved under, the first first;
   * a miss is read again for `waitMs` (by default as a retrieval waits: see `untilWritten`).
   */
  async chain(
    id: string,
    accountId: string,
    style: StoredStyle,
    waitMs?: number,
  ): Promise<{ id: string; part: unknown }[] | undefined> {
    return this.untilWritten(id, accountId, style, waitMs, async () => {
      // The row named, within its retention, then each row it continues, back to the whole one.
      const rows = await this.sql<{ id: string; parent_id: string | null; conversation: string }[]>`
        WITH RECURSIVE chain AS (
          SELECT id, parent_id, conversation, 0 AS depth FROM stored_responses
          WHERE id = ${id} AND account_id = ${accountId} AND style = ${style}
            AND deleted_at IS NULL AND expires_at > now()
          UNION ALL
          SELECT s.id, s.parent_id, s.conversation, chain.depth + 1 FROM stored_responses s
          JOIN chain ON s.id = chain.parent_id AND s.account_id = ${accountId} AND s.style = ${style}
        )
        SELECT id, parent_id, conversation::text AS conversation FROM chain ORDER BY depth DESC`
      if (rows.length === 0) return undefined
      // A chain whose earlier parts are gone is a miss no wait can mend.
      if (rows[0]!.parent_id !== null) return null
      const parts = rows.map((row) => ({
        id: row.id,
        part: JSON.parse(row.conversation) as unknown,
      }))
      return parts.some((row) => row.part === null) ? null : parts
    })
  }

  /** A stored Responses-style response of this account, as the client received it. */
  async response(id: string, accountId: string): Promise<Record<string, unknown> | undefined> {
    return this.untilWritten(id, accountId, 'responses', undefined, async () => {
      const [row] = await this.sql<{ response: string }[]>`
        SELECT response::text AS response FROM stored_responses
        WHERE id = ${id} AND account_id = ${accountId} AND style = 'responses'
          AND deleted_at IS NULL AND expires_at > now()`
      return row && (JSON.parse(row.response) as Record<string, unknown>)
    })
  }

  /**
   * `read` of a response the client may have just been answered, retried while another process may still
   * be writing it: a miss (undefined; null is a final one) is read again, sooner then later, for `waitMs`,
   * by default `followUpWaitMs` but only for an ID this gateway made within the last hour (its time is in
   * it), so that an old or made-up ID is refused at once. Whether it waits depends on the ID alone, never
   * on what is stored, so another account's response is answered as one that does not exist.
   */
  private async untilWritten<T>(
    id: string,
    accountId: string,
    style: StoredStyle,
    waitMs: number = recentId(id) ? this.options.followUpWaitMs : 0,
    read: () => Promise<T | null | undefined>,
  ): Promise<T | undefined> {
    await this.pending.get(id)
    const until = Date.now() + waitMs
    for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
      const found = await read()
      if (found !== undefined) return found ?? undefined
      if (this.options.retentionDays === 0 || Date.now() + pause > until) return undefined
      // Written by now but missed: read once more, as the write may have landed since the read above.
      if (await this.written(id, accountId, style)) return (await read()) ?? undefined
      await Bun.sleep(pause)
    }
  }

  /**
   * Whether this account's row under `id` is there in any state (deleted, past its retention): a miss on
   * it is final, and waiting for a write could not change it. Another account's row is not looked at.
   */
  private async written(id: string, accountId: string, style: StoredStyle): Promise<boolean> {
    const [row] = await this.sql`
      SELECT 1 FROM stored_responses WHERE id = ${id} AND account_id = ${accountId} AND style = ${style}`
    return row !== undefined
  }

  /**
   * Deletes a stored Responses-style response of this account; false when there is none. A response that
   * a later stored one continues keeps its part of the conversation, which that one's follow-ups send, as
   * long as that one is kept; it is no longer retrieved or continued itself. The parts of the deleted
   * ones before it that no kept response needs any more go with it: deleting the last response of a chain
   * whose earlier ones were deleted blanks theirs too.
   */
  async delete(id: string, accountId: string): Promise<boolean> {
    const deleted = await this.untilWritten(id, accountId, 'responses', undefined, () =>
      this.deleteNow(id, accountId),
    )
    return deleted ?? false
  }

  /**
   * One attempt of `delete`: true when deleted, undefined when there is none (yet). The chain's rows are
   * locked first, and what is still needed is read after: a follow-up being written meanwhile holds its
   * parent's row (`save`), so it is either seen as needing that row or finds it blanked and is kept whole.
   */
  private async deleteNow(id: string, accountId: string): Promise<true | undefined> {
    const rows = await this.sql.begin(async (tx) => {
      await tx`
        SELECT 1 FROM stored_responses
        WHERE root_id = (SELECT root_id FROM stored_responses WHERE id = ${id} AND account_id = ${accountId})
        ORDER BY id FOR UPDATE`
      // `line`: the response and the ones it continues; `needed`: every kept response of its chain but
      // it, and each one those continue.
      return tx<{ deleted: boolean }[]>`
      WITH RECURSIVE target AS (
        SELECT id, root_id FROM stored_responses
        WHERE id = ${id} AND account_id = ${accountId} AND style = 'responses' AND deleted_at IS NULL
      ), line AS (
        SELECT s.id, s.parent_id FROM stored_responses s JOIN target t ON s.id = t.id
        UNION ALL
        SELECT s.id, s.parent_id FROM stored_responses s JOIN line ON s.id = line.parent_id
      ), needed AS (
        SELECT s.id, s.parent_id FROM stored_responses s JOIN target t ON s.root_id = t.root_id
        WHERE s.deleted_at IS NULL AND s.id <> t.id
        UNION
        SELECT s.id, s.parent_id FROM stored_responses s JOIN needed ON s.id = needed.parent_id
      )
      UPDATE stored_responses s SET
        deleted_at = CASE WHEN s.id = ${id} THEN now() ELSE s.deleted_at END,
        response = CASE WHEN s.id = ${id} THEN '{}'::json ELSE s.response END,
        conversation = CASE WHEN s.id IN (SELECT id FROM needed) THEN s.conversation ELSE 'null'::json END
      WHERE s.id IN (SELECT id FROM line) AND (s.id = ${id} OR s.deleted_at IS NOT NULL)
      RETURNING s.id = ${id} AS deleted`
    })
    return rows.some((row) => row.deleted) || undefined
  }

  /**
   * Removes conversations past their retention, a chain's rows together once none of them is within it,
   * and deleted responses that nothing continues after a day; returns how many rows went.
   */
  async purgeExpired(): Promise<number> {
    const rows = await this.sql`
      DELETE FROM stored_responses s
      WHERE (s.expires_at <= now() OR s.deleted_at IS NOT NULL)
        AND (
          NOT EXISTS (
            SELECT 1 FROM stored_responses t
            WHERE t.root_id = s.root_id AND t.deleted_at IS NULL AND t.expires_at > now())
          OR (s.deleted_at < now() - interval '1 day'
            AND NOT EXISTS (SELECT 1 FROM stored_responses c WHERE c.parent_id = s.id)))`
    return rows.count
  }
}

/** How long after its request began a response may still be written (a long stream ends late). */
const WRITTEN_WITHIN_MS = 60 * 60_000

/**
 * Whether `id` is a response ID this gateway made (`resp_` and the request's start time in base 36, eight
 * digits) within the last hour.
 */
function recentId(id: string): boolean {
  const match = /^resp_([0-9a-z]{8})/.exec(id)
  if (!match) return false
  const madeAtMs = Number.parseInt(match[1]!, 36)
  return Math.abs(Date.now() - madeAtMs) < WRITTEN_WITHIN_MS
}
