/**
 * The free chat trial: FREE_CHAT_MESSAGES messages per account, counted in `accounts.trial_messages_used`.
 * A message is taken with one conditional UPDATE before the request is sent, so concurrent requests
 * (other processes, other tabs) can never take more than the limit; a request refused before any answer
 * gives its message back.
 */
import type { Sql } from 'postgres'
import type { TrialStatus } from '../../../shared/schemas/admin/playground.ts'
import type { Catalog } from '../../core/catalog/catalog-types.ts'
import { isFreeChoice } from './free-model.ts'

/** Takes one free message; the count used afterwards, or undefined when none is left. */
export async function takeTrialMessage(
  sql: Sql,
  accountId: string,
  limit: number,
): Promise<number | undefined> {
  const [row] = await sql<{ used: number }[]>`
    UPDATE accounts SET trial_messages_used = trial_messages_used + 1
    WHERE id = ${accountId} AND trial_messages_used < ${limit}
    RETURNING trial_messages_used AS used`
  return row?.used
}

export async function giveBackTrialMessage(sql: Sql, accountId: string): Promise<void> {
  await sql`UPDATE accounts SET trial_messages_used = trial_messages_used - 1 WHERE id = ${accountId} AND trial_messages_used > 0`
}

/** The account's free messages, and whether free chat has a free model to use here at all. */
export async function readTrial(
  sql: Sql,
  catalog: Catalog,
  accountId: string,
  free: { freeMessages: number; freeModel: string },
): Promise<TrialStatus> {
  const [row] = await sql<
    { used: number }[]
  >`SELECT trial_messages_used AS used FROM accounts WHERE id = ${accountId}`
  const used = row?.used ?? 0
  const limit = free.freeMessages
  const model = free.freeModel
  return {
    limit,
    used,
    remaining: Math.max(0, limit - used),
    model,
    available: isFreeChoice(catalog, model),
  }
}
