/** What the account and key operations need: the database, the live store, the key cache and defaults. */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../stores/admission/store.ts'
import type { Catalog } from '../core/catalog/catalog-types.ts'
import type { Clock } from '../core/clock.ts'
import type { AccountLimits } from '../core/key-record.ts'
import type { KeyCache } from '../stores/keys/key-cache.ts'

export type KeyCaps = { dailyLimitNano: number; monthlyLimitNano: number }

/** Default spend caps of a new key: the identity account's, and the lower ones of an accountless account. */
export type KeyDefaults = KeyCaps & { accountless: KeyCaps }

export type OperatorDeps = {
  sql: Sql
  store: AdmissionStore
  keys: KeyCache
  catalog: Catalog
  keyDefaults: KeyDefaults
  /** The account-level limits of an account that sets none of its own. */
  accountDefaults: AccountLimits
  clock: Clock
  /** The process's route health, re-read after a provider pause changes so it applies here at once. */
  health?: { refreshPauses(sql: Sql): Promise<void> }
}
