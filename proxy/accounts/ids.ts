/** Identifiers of stored records: a type prefix and 16 random base58 characters. */
import { randomBase58 } from '../core/api-key.ts'

export const newAccountId = () => `acct_${randomBase58(16)}`
export const newKeyId = () => `key_${randomBase58(16)}`
export const newCreditId = () => `crd_${randomBase58(20)}`
export const newUserId = () => `usr_${randomBase58(16)}`
export const newTicketId = () => `tkt_${randomBase58(16)}`
export const newPaymentId = () => `pay_${randomBase58(16)}`
