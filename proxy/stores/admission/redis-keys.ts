/**
 * Every Redis key and channel name of the service. An account's keys share its hash tag `{a:<id>}`,
 * so one script's keys are always in one cluster slot.
 */

const tag = (accountId: string) => `{a:${accountId}}`

export const redisKeys = {
  state: (accountId: string) => `${tag(accountId)}:state`,
  holds: (accountId: string) => `${tag(accountId)}:holds`,
  outbox: (accountId: string) => `${tag(accountId)}:outbox`,
  credits: (accountId: string) => `${tag(accountId)}:credits`,
  /** ZSET account id -> last admission time: the accounts the sweep visits. */
  activeAccounts: 'admission:active-accounts',
  /** One sweeper at a time across processes. */
  sweepLock: 'admission:sweep-lock',
  /** Pub/sub channel of key-cache invalidations. */
  keyInvalidation: 'keys:invalidate',
  /** The account's free playground chat in progress (one at a time); holds the owner's token. */
  freeChatLock: (accountId: string) => `${tag(accountId)}:free-chat`,
  /** Requests of one address in the current window of a per-address limit. */
  addressWindow: (scope: string, address: string) => `address:${scope}:${address}`,
}
