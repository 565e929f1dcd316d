/**
 * Stored conversations (Postgres `stored_responses`), kept `retentionDays`, of two client styles: the
 * Responses style's responses (the neutral conversation of each exchange, so that a follow-up with
 * `previous_response_id` works over a provider of any style, and the response object for retrieval) and
 * the Messages style's threads (the conversation as request fields, for a `thread` continue). The
 * conversation is opaque here; each style reads its own. Writes leave the request path; a follow-up in
 * the same process waits for its predecessor's write, and one that reaches another process first reads
 * again for a moment before it calls the conversation missing, so a client chaining requests never finds
 * the previous one gone.
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

  /** Keeps `conversation` and `response` as the JSON text they are written as (key order included). */
  save(
    id: string,
    accountId: string,
    style: StoredStyle,
    conversation: unknown,
    response: Record<string, unknown>,
  ): void {
    if (this.options.retentionDays === 0) return
    const write = this.sql`
      INSERT INTO stored_responses (id, account_id, style, conversation, response, expires_at)
      VALUES (${id}, ${accountId}, ${style}, ${JSON.stringify(conversation)}::text::json, ${JSON.stringify(response)}::text::json,
              now() + make_interval(days => ${this.options.retentionDays}))
      ON CONFLICT (id) DO NOTHING`
      .then(() => undefined)
      .catch((error) => log.error('stored response not written', { responseId: id, error }))
      .finally(() => this.pending.delete(id))
    this.pending.set(id, write)
  }

  /**
   * The stored conversation of this account and style under `id` (as JSON, for the style to read), or
   * undefined. One made by another process may not be written yet when its follow-up arrives: a miss is
   * read again, sooner then later, until `followUpWaitMs` has passed.
   */
  async conversation(id: string, accountId: string, style: StoredStyle): Promise<unknown> {
    await this.pending.get(id)
    const until = Date.now() + this.options.followUpWaitMs
    for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
      const [row] = await this.sql<{ conversation: string }[]>`
        SELECT conversation::text AS conversation FROM stored_responses
        WHERE id = ${id} AND account_id = ${accountId} AND style = ${style}
          AND deleted_at IS NULL AND expires_at > now()`
      if (row || this.options.retentionDays === 0 || Date.now() + pause > until)
        return row && JSON.parse(row.conversation)
      await Bun.sleep(pause)
    }
  }

  /** A stored Responses-style response of this account, as the client received it. */
  async response(id: string, accountId: string): Promise<Record<string, unknown> | undefined> {
    await this.pending.get(id)
    const [row] = await this.sql<{ response: string }[]>`
      SELECT response::text AS response FROM stored_responses
      WHERE id = ${id} AND account_id = ${accountId} AND style = 'responses'
        AND deleted_at IS NULL AND expires_at > now()`
    return row && (JSON.parse(row.response) as Record<string, unknown>)
  }

  /** Deletes a stored Responses-style response of this account; false when there is none. */
  async delete(id: string, accountId: string): Promise<boolean> {
    await this.pending.get(id)
    const rows = await this.sql`
      UPDATE stored_responses SET deleted_at = now(), conversation = '[]', response = '{}'
      WHERE id = ${id} AND account_id = ${accountId} AND style = 'responses' AND deleted_at IS NULL`
    return rows.count > 0
  }

  /** Removes conversations past their retention; returns how many. */
  async purgeExpired(): Promise<number> {
    const rows = await this
      .sql`DELETE FROM stored_responses WHERE expires_at < now() OR deleted_at < now() - interval '1 day'`
    return rows.count
  }
}
