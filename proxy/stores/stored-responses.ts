/**
 * Stored responses (Postgres `stored_responses`): the neutral conversation of each exchange, so that a
 * follow-up with `previous_response_id` works over a provider of any style, and the response object for
 * retrieval. Writes leave the request path; a follow-up in the same process waits for its predecessor's
 * write, so a client chaining requests never finds the previous one missing.
 */
import type { Sql } from 'postgres'
import { log } from '../core/log.ts'
import type { Turn } from '../core/neutral/conversation.ts'

export class ResponseStore {
  private readonly pending = new Map<string, Promise<void>>()

  constructor(private readonly sql: Sql) {}

  save(id: string, accountId: string, conversation: Turn[], response: Record<string, unknown>): void {
    const write = this.sql`
      INSERT INTO stored_responses (id, account_id, conversation, response)
      VALUES (${id}, ${accountId}, ${this.sql.json(conversation as never)}, ${this.sql.json(response as never)})
      ON CONFLICT (id) DO NOTHING`
      .then(() => undefined)
      .catch((error) => log.error('stored response not written', { responseId: id, error }))
      .finally(() => this.pending.delete(id))
    this.pending.set(id, write)
  }

  /** The stored conversation of a response of this account, or undefined. */
  async conversation(id: string, accountId: string): Promise<Turn[] | undefined> {
    await this.pending.get(id)
    const [row] = await this.sql<{ conversation: Turn[] }[]>`
      SELECT conversation FROM stored_responses
      WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL AND expires_at > now()`
    return row?.conversation
  }

  async response(id: string, accountId: string): Promise<Record<string, unknown> | undefined> {
    await this.pending.get(id)
    const [row] = await this.sql<{ response: Record<string, unknown> }[]>`
      SELECT response FROM stored_responses
      WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL AND expires_at > now()`
    return row?.response
  }

  async delete(id: string, accountId: string): Promise<boolean> {
    await this.pending.get(id)
    const rows = await this.sql`
      UPDATE stored_responses SET deleted_at = now(), conversation = '[]', response = '{}'
      WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`
    return rows.count > 0
  }

  /** Removes responses past their retention; returns how many. */
  async purgeExpired(): Promise<number> {
    const rows = await this.sql`DELETE FROM stored_responses WHERE expires_at < now() OR deleted_at < now() - interval '1 day'`
    return rows.count
  }
}
