/**
 * The replies of the admission scripts (lua/*.lua) and the packed records of the state hash, read into
 * the store's types.
 */
import type {
  AccountSnapshot,
  AdmitResult,
  KeySnapshot,
  LedgerEntry,
  RateLimitName,
  SettleResult,
  SpendWindow,
} from './store.ts'
import { calendar } from './windows.ts'

export type Reply = (string | number)[]

export function parseAdmit(reply: Reply): AdmitResult {
  switch (reply[0]) {
    case 'ok':
      return { ok: true, availableNano: Number(reply[1]), nowMs: Number(reply[2]) }
    case 'rate':
      return {
        ok: false,
        reason: 'rate',
        limit: reply[1] as RateLimitName,
        value: Number(reply[2]),
        retryAfterMs: Number(reply[3]),
        availableNano: Number(reply[4]),
      }
    case 'spend':
      return {
        ok: false,
        reason: 'spend',
        window: reply[1] as SpendWindow,
        capNano: Number(reply[2]),
        resetAtMs: Number(reply[3]),
        availableNano: Number(reply[4]),
      }
    case 'free':
      return {
        ok: false,
        reason: 'free',
        allowance: Number(reply[1]),
        retryAfterMs: Number(reply[2]),
        availableNano: Number(reply[3]),
      }
    case 'credits':
      return { ok: false, reason: 'credits', availableNano: Number(reply[1]) }
    case 'cold':
      return { ok: false, reason: 'cold' }
    case 'duplicate':
      return { ok: false, reason: 'duplicate' }
    default:
      throw new Error(`admit returned ${String(reply[0])}`)
  }
}

export function parseEnded(reply: Reply): SettleResult {
  if (reply[0] === 'settled') {
    return {
      status: 'settled',
      chargedNano: Number(reply[1]),
      writtenOffNano: Number(reply[2]),
      availableNano: Number(reply[3]),
      again: reply[4] === 'again',
    }
  }
  return { status: 'missing', availableNano: Number(reply[1]) }
}

export function parseOutboxEntry(
  accountId: string,
  requestId: string,
  value: string,
): LedgerEntry | undefined {
  const [keyId, charged, writtenOff, at, ...record] = value.split('|')
  if (!keyId || charged === undefined || writtenOff === undefined || at === undefined)
    return undefined
  return {
    requestId,
    accountId,
    keyId,
    chargedNano: Number(charged),
    writtenOffNano: Number(writtenOff),
    atMs: Number(at),
    // The record is JSON, which may hold the separator itself.
    record: record.join('|') || undefined,
  }
}

/** Reads the packed records of the state hash (see lua/lib.lua); spend of past windows counts as 0. */
export function snapshotFromFields(fields: Record<string, string>): AccountSnapshot {
  const { day, month } = calendar(Date.now())
  // The rate buckets sit in the middle of the account's and key's records: the fields read here are
  // the first ones and the last ones, wherever the buckets end.
  const numbers = (value: string | undefined) =>
    (value ?? '').split('|').filter(Boolean).map(Number)
  const ends = (value: string | undefined, first: number, last: number) => {
    const all = numbers(value)
    const padded = all.length >= first + last ? all : Array.from({ length: first + last }, () => 0)
    return [...padded.slice(0, first), ...padded.slice(padded.length - last)]
  }
  const [balanceNano = 0, heldNano = 0, inFlight = 0, fd, fc = 0] = ends(fields.a, 3, 2)
  const keys: KeySnapshot[] = Object.entries(fields)
    .filter(([field]) => field.startsWith('k:'))
    .map(([field, value]) => {
      const [held = 0, conc = 0, dw, ds = 0, mw, ms = 0] = ends(value, 2, 4)
      return {
        keyId: field.slice(2),
        heldNano: held,
        inFlight: conc,
        daySpentNano: dw === day ? ds : 0,
        monthSpentNano: mw === month ? ms : 0,
      }
    })
  const guardrails = Object.entries(fields)
    .filter(([field]) => field.startsWith('g:'))
    .map(([field, value]) => {
      const [held = 0, mw, ms = 0] = ends(value, 1, 2)
      return { guardrailId: field.slice(2), heldNano: held, monthSpentNano: mw === month ? ms : 0 }
    })
  const freeUsedToday = fd === day ? fc : 0
  return {
    loaded: fields.a !== undefined,
    balanceNano,
    heldNano,
    availableNano: balanceNano - heldNano,
    inFlight,
    keys,
    guardrails,
    freeUsedToday,
  }
}
