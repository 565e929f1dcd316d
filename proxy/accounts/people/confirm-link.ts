/**
 * Confirming an e-mailed link (the POST of its confirm page): the token is consumed and, in the same
 * transaction, what it was sent for happens: a sign-in (the user is created when new, and gets an account
 * of their own when they have none), a claim (the user becomes the owner of the accountless account), or
 * a team invite (the user joins the account). A refusal rolls the whole back.
 */
import type { Sql } from 'postgres'
import { ServiceError } from '../../../shared/errors.ts'
import type { KeyCache } from '../../stores/keys/key-cache.ts'
import { consumeEmailToken, type TokenPurpose } from './email-tokens.ts'
import { joinTeam } from './team.ts'
import { accountForSignIn, attachIdentity, findOrCreateUser } from './users.ts'

export type Confirmed = { purpose: TokenPurpose; accountId: string; userId: string }

export async function confirmEmailLink(
  deps: { sql: Sql; keys: KeyCache },
  token: string,
  nowMs: number,
): Promise<Confirmed> {
  const confirmed = await deps.sql.begin(async (tx): Promise<Confirmed> => {
    const link = await consumeEmailToken(tx, token, nowMs)
    if (!link)
      throw new ServiceError(
        'unauthorized',
        'token: this link is unknown, expired or already used; ask for a new one.',
        { param: 'token' },
      )
    const userId = await findOrCreateUser(tx, { email: link.email })
    if (link.purpose === 'claim') {
      await attachIdentity(tx, link.accountId!, userId)
      return { purpose: link.purpose, accountId: link.accountId!, userId }
    }
    if (link.purpose === 'invite') {
      await joinTeam(tx, link.accountId!, userId, link.role ?? 'member')
      return { purpose: link.purpose, accountId: link.accountId!, userId }
    }
    return {
      purpose: link.purpose,
      accountId: (await accountForSignIn(tx, userId)).accountId,
      userId,
    }
  })
  // The account's kind is part of what its keys carry.
  if (confirmed.purpose === 'claim') await deps.keys.invalidate({ accountId: confirmed.accountId })
  return confirmed
}
