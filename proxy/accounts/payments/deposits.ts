/**
 * Stablecoin deposits on an EVM chain: each account gets its own deposit address, derived from the
 * operator's extended public key (DEPOSIT_XPUB, BIP-32, non-hardened child at the next index of a
 * sequence), so the gateway never holds a private key and the operator's wallet controls every address.
 * The accepted tokens (DEPOSIT_TOKENS: `SYMBOL:contract:decimals`, comma-separated) and the number of
 * confirmations a transfer needs are shown with the address.
 */
import { secp256k1 } from '@noble/curves/secp256k1'
import { HDKey } from '@scure/bip32'
import type { Sql } from 'postgres'
import { bytesToHex, getAddress, isAddress } from 'viem'
import { publicKeyToAddress } from 'viem/accounts'
import { ConfigError, type Config } from '../../core/config.ts'

export type DepositToken = { symbol: string; contract: `0x${string}`; decimals: number }

export type Deposits = {
  key: HDKey
  /** The extended key's fingerprint, stored with each address so a new key never reuses an index. */
  fingerprint: string
  chainId: number
  tokens: DepositToken[]
  confirmations: number
}

/** The deposit settings, checked; undefined when DEPOSIT_XPUB is empty (no deposits). */
export function depositSettings(config: Config): Deposits | undefined {
  if (!config.DEPOSIT_XPUB) return undefined
  let key: HDKey
  try {
    key = HDKey.fromExtendedKey(config.DEPOSIT_XPUB)
  } catch (error) {
    throw new ConfigError(`DEPOSIT_XPUB: not an extended public key (${(error as Error).message})`)
  }
  if (key.privateKey)
    throw new ConfigError(
      'DEPOSIT_XPUB: give the extended public key (xpub…), never a private one: the gateway needs no private key.',
    )
  const tokens = config.DEPOSIT_TOKENS.split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [symbol, contract, decimals] = entry.split(':')
      if (!symbol || !contract || !isAddress(contract) || !/^\d+$/.test(decimals ?? ''))
        throw new ConfigError(
          `DEPOSIT_TOKENS: "${entry}" is not SYMBOL:contract-address:decimals (e.g. USDC:0xA0b8…eB48:6)`,
        )
      return { symbol, contract: getAddress(contract), decimals: Number(decimals) }
    })
  if (tokens.length === 0)
    throw new ConfigError('DEPOSIT_TOKENS: name at least one token when DEPOSIT_XPUB is set.')
  return {
    key,
    fingerprint: key.fingerprint.toString(16).padStart(8, '0'),
    chainId: config.DEPOSIT_CHAIN_ID,
    tokens,
    confirmations: config.DEPOSIT_CONFIRMATIONS,
  }
}

/** The address at `index` below the extended key (checksummed). */
export function addressAt(deposits: Pick<Deposits, 'key'>, index: number): `0x${string}` {
  const child = deposits.key.deriveChild(index)
  const point = secp256k1.ProjectivePoint.fromHex(child.publicKey!)
  return publicKeyToAddress(bytesToHex(point.toRawBytes(false)))
}

/** The account's deposit address: the one it has, or a new one at the next index. */
export async function depositAddress(
  sql: Sql,
  deposits: Deposits,
  accountId: string,
): Promise<`0x${string}`> {
  const existing = await sql<{ address: `0x${string}` }[]>`
    SELECT address FROM deposit_addresses WHERE account_id = ${accountId}`
  if (existing[0]) return existing[0].address
  const [next] = await sql<{ index: number }[]>`
    SELECT nextval('deposit_address_index')::int AS index`
  const index = next!.index
  const address = addressAt(deposits, index)
  await sql`
    INSERT INTO deposit_addresses (account_id, key_fingerprint, derivation_index, address)
    VALUES (${accountId}, ${deposits.fingerprint}, ${index}, ${address})
    ON CONFLICT (account_id) DO NOTHING`
  // A concurrent first request may have won: its address stands (this index stays unused).
  const [row] = await sql<{ address: `0x${string}` }[]>`
    SELECT address FROM deposit_addresses WHERE account_id = ${accountId}`
  return row!.address
}
