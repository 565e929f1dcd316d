/**
 * The deposit watcher: follows ERC-20 `Transfer` logs of the accepted tokens (DEPOSIT_TOKENS) on the
 * deposits' chain (DEPOSIT_RPC_URL) and credits transfers to deposit addresses once they have
 * DEPOSIT_CONFIRMATIONS blocks on top. Each round:
 *
 *  1. reads the logs from its cursor (persisted in `chain_cursors`, so a restart goes on where it was) to
 *     the chain's head, and records each transfer to a deposit address as a pending payment, once per
 *     chain, transaction hash and log index; a sender on the sanctions list holds it uncredited and
 *     suspends the account;
 *  2. checks the credited transfers still inside the reorganisation window: one whose transaction is no
 *     longer in the chain, or no longer carries the transfer at its log index (a reorganisation mined it
 *     elsewhere), is reversed; should the chain carry it again later, in another block, it is recorded
 *     again as a new payment (see identityOf);
 *  3. credits each pending transfer whose transaction receipt (the canonical one) carries the transfer
 *     at its log index and has the confirmations; one whose transaction left the chain fails.
 *
 * The cursor stays a reorganisation window behind the head, so recent blocks are read again; recording
 * and crediting are idempotent, so rounds may overlap, repeat, or run in several processes.
 */
import {
  createPublicClient,
  http,
  parseAbiItem,
  toEventSelector,
  type Address,
  type Hash,
  type PublicClient,
  type TransactionReceipt,
} from 'viem'
import { log } from '../../core/log.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { suspendAccount } from '../suspension.ts'
import type { Deposits, DepositToken } from './deposits.ts'
import {
  creditPayment,
  failPayment,
  holdPayment,
  recordPayment,
  reversePayment,
} from './payments.ts'
import type { SanctionsList } from './sanctions.ts'

const TRANSFER = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
)
const TRANSFER_TOPIC = toEventSelector(TRANSFER).toLowerCase()
/** Most blocks one getLogs call asks for. */
const MAX_RANGE = 2_000n
/** Most recipients one getLogs call filters on. */
const ADDRESSES_PER_CALL = 200

type Deps = Pick<OperatorDeps, 'sql' | 'store' | 'keys' | 'clock'>

type TransferDetail = {
  chainId: number
  txHash: Hash
  logIndex: number
  blockNumber: string
  /** The block the transfer was read in (records made before it was kept have none). */
  blockHash?: Hash
  from: Address
  to: Address
  token: Address
  value: string
}

export class DepositWatcher {
  private readonly client: PublicClient
  private readonly window: bigint
  private running: Promise<void> | undefined
  private timer: Timer | undefined
  /** The last block this process looked at for transfers of other tokens. */
  private reportedTo = -1n

  constructor(
    private readonly deps: Deps,
    private readonly deposits: Deposits,
    rpcUrl: string,
    private readonly sanctions?: SanctionsList,
  ) {
    // cacheTime 0: each round reads the head afresh (viem would answer a cached one for seconds).
    this.client = createPublicClient({
      transport: http(rpcUrl, { timeout: 20_000 }),
      cacheTime: 0,
    })
    // Blocks read again each round and credited transfers checked again: well past the confirmations.
    this.window = BigInt(Math.max(64, deposits.confirmations * 4))
  }

  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.round().catch(() => {}), intervalMs)
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** One round (concurrent calls share it); failures are logged and the next round tries again. */
  round(): Promise<void> {
    this.running ??= this.work()
      .catch((error) => log.warn('deposit watcher round failed; it runs again', { error }))
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }

  private async work(): Promise<void> {
    const head = await this.client.getBlockNumber()
    await this.readLogs(head)
    // Reversals before credits: a transfer a reorganisation moved is taken back under its old place
    // before it is credited under its new one, so the balance never holds it twice.
    await this.checkCredited(head)
    await this.confirmPending(head)
  }

  private async readLogs(head: bigint): Promise<void> {
    const chainId = this.deposits.chainId
    const [cursor] = await this.deps.sql<{ next_block: number }[]>`
      SELECT next_block FROM chain_cursors WHERE chain_id = ${chainId}`
    // A first start reads from a window before the head (deposit addresses exist only from now on).
    let from = cursor ? BigInt(cursor.next_block) : head > this.window ? head - this.window : 0n
    while (from <= head) {
      const to = from + MAX_RANGE - 1n < head ? from + MAX_RANGE - 1n : head
      const logs = await this.client.getLogs({
        address: this.deposits.tokens.map((token) => token.contract),
        event: TRANSFER,
        fromBlock: from,
        toBlock: to,
      })
      await this.record(logs)
      await this.reportOtherTokens(from > this.reportedTo ? from : this.reportedTo + 1n, to)
      from = to + 1n
    }
    const next = head + 1n > this.window ? head + 1n - this.window : 0n
    const keep = cursor && BigInt(cursor.next_block) > next ? BigInt(cursor.next_block) : next
    await this.deps.sql`
      INSERT INTO chain_cursors (chain_id, next_block) VALUES (${chainId}, ${keep.toString()})
      ON CONFLICT (chain_id) DO UPDATE SET next_block = excluded.next_block, updated_at = now()`
  }

  /**
   * Transfers of tokens that are not accepted, to deposit addresses, in blocks not looked at before by
   * this process: never credited, logged for the operator (who may return or credit them by hand).
   */
  private async reportOtherTokens(from: bigint, to: bigint): Promise<void> {
    if (from > to) return
    const addresses = (
      await this.deps.sql<{ address: Address }[]>`SELECT address FROM deposit_addresses`
    ).map((row) => row.address)
    for (let start = 0; start < addresses.length; start += ADDRESSES_PER_CALL) {
      const logs = await this.client.getLogs({
        event: TRANSFER,
        args: { to: addresses.slice(start, start + ADDRESSES_PER_CALL) },
        fromBlock: from,
        toBlock: to,
      })
      for (const entry of logs) {
        if (this.tokenOf(entry.address)) continue
        log.warn('a transfer of a token that is not accepted, to a deposit address: not credited', {
          token: entry.address,
          to: entry.args.to,
          txHash: entry.transactionHash,
          value: entry.args.value?.toString(),
        })
      }
    }
    this.reportedTo = to
  }

  private async record(
    logs: {
      args: { from?: Address; to?: Address; value?: bigint }
      address: Address
      transactionHash: Hash | null
      logIndex: number | null
      blockNumber: bigint | null
      blockHash: Hash | null
    }[],
  ): Promise<void> {
    const recipients = [...new Set(logs.flatMap((entry) => (entry.args.to ? [entry.args.to] : [])))]
    if (recipients.length === 0) return
    const owners = new Map(
      (
        await this.deps.sql<{ account_id: string; address: string }[]>`
          SELECT account_id, address FROM deposit_addresses WHERE address = ANY(${recipients}::text[])`
      ).map((row) => [row.address, row.account_id]),
    )
    for (const entry of logs) {
      const { from, to, value } = entry.args
      const accountId = to && owners.get(to)
      if (!accountId || !from || value === undefined || !entry.transactionHash) continue
      const token = this.tokenOf(entry.address)!
      const amountNano = nanoOf(value, token)
      if (amountNano <= 0 || !Number.isSafeInteger(amountNano)) {
        log.warn('a deposit too small or too large to credit automatically: left to the operator', {
          accountId,
          txHash: entry.transactionHash,
          value: value.toString(),
        })
        continue
      }
      const detail: TransferDetail = {
        chainId: this.deposits.chainId,
        txHash: entry.transactionHash,
        logIndex: entry.logIndex ?? 0,
        blockNumber: String(entry.blockNumber ?? 0n),
        blockHash: entry.blockHash ?? undefined,
        from,
        to,
        token: token.contract,
        value: value.toString(),
      }
      const externalId = await this.identityOf(detail)
      const payment = await recordPayment(this.deps.sql, {
        accountId,
        provider: 'chain',
        externalId,
        amountNano,
        currency: token.symbol,
        detail,
      })
      if (payment.state === 'pending' && (await this.sanctions?.has(from))) {
        await holdPayment(this.deps.sql, 'chain', externalId)
        await suspendAccount(
          this.deps,
          accountId,
          'sanctions',
          `deposit from ${from}, which is on the sanctions list`,
        )
        log.warn('a deposit from an address on the sanctions list: held, account suspended', {
          accountId,
          paymentId: payment.id,
        })
      }
    }
  }

  /**
   * The payment identity of a transfer: chain, transaction hash and log index. A transfer whose payment
   * a reorganisation took out (reversed, or failed once its transaction stayed out of the chain) and
   * that the chain carries again, in another block, is a new payment named also by that block: it is
   * credited once it has the confirmations, as the first was. While one of its payments is pending,
   * credited or held, the transfer is that payment.
   */
  private async identityOf(detail: TransferDetail): Promise<string> {
    const first = `${detail.chainId}:${detail.txHash}:${detail.logIndex}`
    const records = await this.deps.sql<
      { external_id: string; state: string; detail: TransferDetail }[]
    >`
      SELECT external_id, state, detail FROM payments
      WHERE provider = 'chain' AND (external_id = ${first} OR external_id LIKE ${`${first}:%`})
      ORDER BY created_at DESC, id DESC`
    const [latest] = records
    if (!latest) return first
    const live = records.find((record) => ['pending', 'credited', 'held'].includes(record.state))
    if (live) return live.external_id
    // A failed payment read again in its own block stays failed (an operator's rejection stands).
    const sameBlock = latest.detail.blockHash
      ? latest.detail.blockHash === detail.blockHash
      : latest.detail.blockNumber === detail.blockNumber
    if (latest.state === 'failed' && sameBlock) return latest.external_id
    return `${first}:${detail.blockHash ?? detail.blockNumber}`
  }

  private async confirmPending(head: bigint): Promise<void> {
    for (const payment of await this.watched('pending')) {
      const receipt = await this.receiptOf(payment.detail.txHash)
      if (!receipt || !carries(receipt, payment.detail)) {
        // Its transaction left the chain, or is now in another place (its transfer, if any, is
        // recorded under its new log index): after the window it is not coming back as it was.
        if (BigInt(payment.detail.blockNumber) + this.window < head)
          await failPayment(this.deps.sql, 'chain', payment.external_id)
        continue
      }
      if (head - receipt.blockNumber + 1n >= BigInt(this.deposits.confirmations))
        await creditPayment(this.deps, 'chain', payment.external_id)
    }
  }

  private async checkCredited(head: bigint): Promise<void> {
    for (const payment of await this.watched('credited')) {
      if (BigInt(payment.detail.blockNumber) + this.window < head) continue
      const receipt = await this.receiptOf(payment.detail.txHash)
      if (receipt && carries(receipt, payment.detail)) continue
      log.warn('a credited deposit left the chain (reorganisation): reversed', {
        paymentId: payment.id,
        txHash: payment.detail.txHash,
      })
      await reversePayment(this.deps, 'chain', payment.external_id, 'chain reorganisation')
    }
  }

  /** This chain's payments in a state, with their transfer. */
  private async watched(state: 'pending' | 'credited') {
    return this.deps.sql<{ id: string; external_id: string; detail: TransferDetail }[]>`
      SELECT id, external_id, detail FROM payments
      WHERE provider = 'chain' AND state = ${state}
        AND (detail->>'chainId')::int = ${this.deposits.chainId}
      ORDER BY created_at`
  }

  private async receiptOf(hash: Hash): Promise<TransactionReceipt | undefined> {
    try {
      return await this.client.getTransactionReceipt({ hash })
    } catch (error) {
      if ((error as Error).name === 'TransactionReceiptNotFoundError') return undefined
      throw error
    }
  }

  private tokenOf(contract: Address): DepositToken | undefined {
    return this.deposits.tokens.find(
      (token) => token.contract.toLowerCase() === contract.toLowerCase(),
    )
  }
}

/** Token units in nano-USD: the tokens are dollar stablecoins, one token a dollar. */
export function nanoOf(value: bigint, token: Pick<DepositToken, 'decimals'>): number {
  const scale = 10n ** BigInt(token.decimals)
  return Number((value * 1_000_000_000n) / scale)
}

/**
 * Whether a successful receipt still holds the transfer at the log index it was recorded under (same
 * token, event, recipient and value). The log index is the payment's identity: a reorganisation that
 * mines the transaction again elsewhere in a block moves its logs, and the transfer is then recorded,
 * and credited, under its new index, so the old record must no longer count as carried.
 */
function carries(receipt: TransactionReceipt, transfer: TransferDetail): boolean {
  if (receipt.status !== 'success') return false
  const entry = receipt.logs.find((candidate) => candidate.logIndex === transfer.logIndex)
  return (
    entry !== undefined &&
    entry.address.toLowerCase() === transfer.token.toLowerCase() &&
    entry.topics[0]?.toLowerCase() === TRANSFER_TOPIC &&
    entry.topics[2]?.toLowerCase().endsWith(transfer.to.slice(2).toLowerCase()) === true &&
    BigInt(entry.data) === BigInt(transfer.value)
  )
}
