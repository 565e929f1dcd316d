/**
 * Sanctions screening of wallet addresses: a list file (SANCTIONS_LIST_FILE), one address a line,
 * `#` starting a comment, read again whenever its modification time changes (checked on each lookup, a
 * stat call). A wallet sign-in with a listed address suspends every account of that user (reason
 * `sanctions`, the spec's trigger); the session still opens, with the read and support access a
 * suspended account keeps. A file that cannot be read keeps the last list it gave, with a warning.
 */
import { readFile, stat } from 'node:fs/promises'
import { ConfigError } from '../../core/config.ts'
import { log } from '../../core/log.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { suspendAccount } from '../suspension.ts'

export class SanctionsList {
  private addresses = new Set<string>()
  private readMtimeMs = -1
  private reading: Promise<void> | undefined

  constructor(readonly path: string) {}

  /**
   * The list at start: a file that cannot be read then stops the start naming SANCTIONS_LIST_FILE, rather
   * than leaving screening on an empty list with a warning at the first sign-in.
   */
  static async open(path: string): Promise<SanctionsList> {
    try {
      await readFile(path, 'utf8')
    } catch (error) {
      throw new ConfigError(
        `SANCTIONS_LIST_FILE (${path}) cannot be read: ${(error as Error).message}. Screening needs its list: fix the path, or leave SANCTIONS_LIST_FILE empty for no screening.`,
      )
    }
    const list = new SanctionsList(path)
    await list.current()
    return list
  }

  /** Whether the address (any case) is on the list. */
  async has(address: string): Promise<boolean> {
    await this.current()
    return this.addresses.has(address.toLowerCase())
  }

  get size(): number {
    return this.addresses.size
  }

  private async current(): Promise<void> {
    this.reading ??= this.refresh().finally(() => {
      this.reading = undefined
    })
    await this.reading
  }

  private async refresh(): Promise<void> {
    try {
      const { mtimeMs } = await stat(this.path)
      if (mtimeMs === this.readMtimeMs) return
      const text = await readFile(this.path, 'utf8')
      this.addresses = new Set(
        text
          .split('\n')
          .map((line) => line.replace(/#.*/, '').trim().toLowerCase())
          .filter((line) => /^0x[0-9a-f]{40}$/.test(line)),
      )
      this.readMtimeMs = mtimeMs
      log.info('sanctions list read', { path: this.path, addresses: this.addresses.size })
    } catch (error) {
      log.warn('sanctions list unreadable; the last list read stays in force', {
        path: this.path,
        error,
      })
    }
  }
}

/** Suspends every account of a user whose wallet is listed; answers whether it was listed. */
export async function screenWallet(
  deps: Pick<OperatorDeps, 'sql' | 'keys' | 'clock'>,
  list: SanctionsList | undefined,
  userId: string,
  wallet: string,
): Promise<boolean> {
  if (!list || !(await list.has(wallet))) return false
  const accounts = await deps.sql<{ account_id: string }[]>`
    SELECT account_id FROM memberships WHERE user_id = ${userId}`
  for (const { account_id: accountId } of accounts)
    await suspendAccount(deps, accountId, 'sanctions', `wallet ${wallet} is on the sanctions list`)
  log.warn('wallet sign-in with an address on the sanctions list: accounts suspended', {
    userId,
    accounts: accounts.length,
  })
  return true
}
