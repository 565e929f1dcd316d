/** The Markdown report of `bun run bench:accounts`. */
import { nanoToUsd, usdToNano } from '../shared/money.ts'
import { trafficKinds, type MixedResult } from './accounts-load.ts'
import { answeredTotal, type Reading } from './accounts-readings.ts'
import type { MoneyCheck } from './accounts-money.ts'
import type { Options } from './accounts-options.ts'
import type { describeMachine } from './machine.ts'

export const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const int = (value: number) => Math.round(value).toLocaleString('en-US')
const signed = (value: number, digits = 0) =>
  `${value >= 0 ? '+' : '−'}${Math.abs(value).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })}`

export function kinds(reading: Reading): string {
  const order = [
    'state',
    'credits',
    'holds',
    'outbox',
    'admission',
    'address',
    'free-chat',
    'other',
  ]
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length)
  const names = Object.keys(reading.redis.byKind).sort((a, b) => rank(a) - rank(b))
  return names.map((name) => `${name} ${int(reading.redis.byKind[name]!)}`).join(', ') || 'none'
}

/** The run's Redis keys, and DBSIZE when its database holds others too. */
function redisCount(reading: Reading): string {
  const { total, dbsize } = reading.redis
  return dbsize === total ? int(total) : `${int(total)} (DBSIZE ${int(dbsize)})`
}

function readingsTable(readings: Reading[]): string {
  const rows = [
    '| Reading | At | Answered | Requests/s | Gateway RSS | JS heap | Gateway CPU | Machine busy | Redis keys | By kind | Redis used_memory | Ledger rows | Request-log rows | Stored responses |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
  ]
  readings.forEach((reading, index) => {
    const previous = readings[index - 1]
    const seconds = previous ? (reading.atMs - previous.atMs) / 1000 : 0
    const rate =
      previous && seconds > 0
        ? int((answeredTotal(reading) - answeredTotal(previous)) / seconds)
        : ''
    const cpu =
      previous && seconds > 0
        ? `${Math.round(((reading.gateway.cpuS - previous.gateway.cpuS) / seconds) * 100)}%`
        : ''
    const busy =
      previous && reading.cpu.total > previous.cpu.total
        ? `${Math.round(((reading.cpu.busy - previous.cpu.busy) / (reading.cpu.total - previous.cpu.total)) * 100)}%`
        : ''
    rows.push(
      `| ${reading.label} | ${reading.atS.toFixed(0)} s | ${int(answeredTotal(reading))} | ${rate} | ${mb(reading.gateway.rssKb * 1024)} MB | ${mb(reading.gateway.heapUsedBytes)} MB | ${cpu} | ${busy} | ${redisCount(reading)} | ${kinds(reading)} | ${mb(reading.redis.usedMemory)} MB | ${int(reading.postgres.ledger)} | ${int(reading.postgres.requestLogs)} | ${int(reading.postgres.storedResponses)} |`,
    )
  })
  return rows.join('\n')
}

function answersTable(reading: Reading): string {
  const rows = ['| Style | Status | Answers |', '| --- | ---: | ---: |']
  for (const [key, count] of Object.entries(reading.answered).sort()) {
    const [style, status] = key.split(' ')
    rows.push(`| ${style} | ${status} | ${int(count)} |`)
  }
  return rows.join('\n')
}

type Report = {
  options: Options
  machine: Awaited<ReturnType<typeof describeMachine>>
  busyBefore: number | undefined
  revision: string
  stores: { database: string; admission: string }
  setup: { seconds: number }
  load: MixedResult
  readings: Reading[]
  settledAfterS: number
  money: MoneyCheck
  log: { lines: number; samples: string[] }
  startedAt: Date
}

function growth(report: Report): string[] {
  const { readings, options } = report
  const before = readings.find((reading) => reading.label === 'before')!
  const after = readings[readings.length - 1]!
  const during = readings.filter(
    (reading) => reading.label.startsWith('load') || reading.label === 'end of load',
  )
  const requests = answeredTotal(after) - answeredTotal(before)
  const lines: string[] = []
  const keyDelta = after.redis.total - before.redis.total
  lines.push(
    `- Redis keys of the run: ${int(before.redis.total)} before, ${int(after.redis.total)} ${after.label} (${signed(keyDelta)}; ${kinds(after)}), for ${int(options.accounts)} accounts and ${int(requests)} requests: ${(after.redis.total / options.accounts).toFixed(2)} keys per account, ${((keyDelta / Math.max(1, requests)) * 1e6).toFixed(1)} per million requests.`,
  )
  if (before.redis.bytes !== undefined && after.redis.bytes !== undefined)
    lines.push(
      `- Memory of those keys (MEMORY USAGE, summed): ${mb(before.redis.bytes)} MB before, ${mb(after.redis.bytes)} MB ${after.label}: ${int(after.redis.bytes / options.accounts)} bytes per account.`,
    )
  lines.push(
    `- Gateway resident memory: ${mb(before.gateway.rssKb * 1024)} MB before, ${mb(after.gateway.rssKb * 1024)} MB ${after.label} (${signed((after.gateway.rssKb - before.gateway.rssKb) / 1024, 1)} MB, ${((after.gateway.rssKb - before.gateway.rssKb) / options.accounts).toFixed(1)} KB per account; peak ${mb(after.gateway.peakRssKb * 1024)} MB); JS heap ${mb(before.gateway.heapUsedBytes)} MB before, ${mb(after.gateway.heapUsedBytes)} MB ${after.label}.`,
  )
  if (during.length >= 2) {
    const first = during[0]!
    const last = during[during.length - 1]!
    const served = answeredTotal(last) - answeredTotal(first)
    if (served > 0)
      lines.push(
        `- During the load, from the first reading (${first.atS.toFixed(0)} s) to the last (${last.atS.toFixed(0)} s), ${int(served)} requests: resident memory ${signed((last.gateway.rssKb - first.gateway.rssKb) / 1024, 1)} MB, JS heap ${signed((last.gateway.heapUsedBytes - first.gateway.heapUsedBytes) / 1024 / 1024, 1)} MB, Redis keys ${signed(last.redis.total - first.redis.total)}.`,
      )
  }
  const unknown = after.redis.unknown
  if (unknown.length > 0) lines.push(`- Keys of no known kind, for example: ${unknown.join(', ')}.`)
  return lines
}

const listed = (counts: Record<string, number>, separator = ' ') =>
  Object.entries(counts)
    .map(([name, count]) => `${name}${separator}${int(count)}`)
    .join(', ')

function moneyLines(report: Report): string[] {
  const { money, options } = report
  const credited = usdToNano(options.creditUsd)! * options.accounts
  const equal = money.mismatched.length === 0
  const orphans =
    money.holdsLeft > 0
      ? ` (${money.orphanHolds} of them only with the holds of admissions Redis placed but did not confirm in time: 502 admission_unconfirmed, nothing sent or charged; such a hold ends at its deadline)`
      : ''
  const lines = [
    `- ${int(money.accounts)} accounts read through the operator API once every lease and outbox entry had ended (${report.settledAfterS.toFixed(1)} s after the load): balance equal to the ledger sum for ${int(money.accounts - money.mismatched.length)}: ${equal ? '**every one**' : `**${money.mismatched.length} differ**`}; negative balances: ${money.negative}; accounts with a hold or a request in flight left: ${money.holdsLeft}${orphans}.`,
  ]
  for (const mismatch of money.mismatched.slice(0, 5))
    lines.push(
      `  - ${mismatch.accountId}: balance ${mismatch.balanceNano} nano, ledger ${mismatch.ledgerBalanceNano} nano`,
    )
  const sameSum = money.ledger.sumNano === money.balanceNano
  const sameCharges =
    money.logs.chargedNano === -money.ledger.chargeNano &&
    money.logs.charged === (money.ledger.rows.charge ?? 0)
  const errors = Object.keys(money.logs.byError).length
    ? `; errors: ${listed(money.logs.byError)}`
    : ''
  lines.push(
    `- Ledger: credits $${nanoToUsd(money.ledger.creditNano)} (expected $${nanoToUsd(credited)}), charges $${nanoToUsd(-money.ledger.chargeNano)}, written off $${nanoToUsd(money.ledger.writtenOffNano)}; sum $${nanoToUsd(money.ledger.sumNano)} against $${nanoToUsd(money.balanceNano)} of live balances: ${sameSum ? 'equal' : '**different**'}.`,
    `- Ledger rows by kind: ${listed(money.ledger.rows)}. Request log: ${int(money.logs.rows)} rows (${listed(money.logs.byStatus, ': ')}${errors}), ${int(money.logs.charged)} with a charge, $${nanoToUsd(money.logs.chargedNano)} charged in all: ${sameCharges ? 'the same charges as the ledger' : '**not the ledger’s charges**'}.`,
  )
  return lines
}

export function renderReport(report: Report): string {
  const { options, machine, load, readings } = report
  const last = readings[readings.length - 1]!
  const errors = load.errors.connect + load.errors.read + load.errors.write + load.errors.timeout
  const busy =
    report.busyBefore === undefined
      ? ''
      : `; ${Math.round(report.busyBefore * 100)}% busy just before the run`
  return [
    `### ${int(options.accounts)} accounts, ${options.durationS} s of mixed traffic`,
    '',
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB RAM, ${machine.kernel}${busy}`,
    `- Bun ${machine.bun}; gateway ${report.revision}; one process${options.gatewayEnv.length > 0 ? ` with ${options.gatewayEnv.join(', ')}` : ''}; ${report.stores.database}; ${report.stores.admission}`,
    `- Setup: ${int(options.accounts)} accounts with $${options.creditUsd} of credit and one key each, through the operator API (${options.setupConcurrency} calls in flight), in ${report.setup.seconds.toFixed(1)} s (${int(options.accounts / report.setup.seconds)} accounts and keys a second)`,
    `- Load: wrk, one thread, ${options.connections} keep-alive connections, ${options.durationS} s; every request one of six kinds at random (Chat Completions, Responses, Messages; streaming or not) with one of the ${int(options.accounts)} keys at random; zero-delay upstream; run started ${report.startedAt.toISOString()}`,
    '',
    '#### Readings',
    '',
    readingsTable(readings),
    '',
    'Answered, Requests/s and the gateway’s CPU (of one core) count from the previous reading; Redis keys are those of the run’s prefix, in a database of its own (equal to its DBSIZE unless noted); used_memory is the whole Redis server’s.',
    '',
    '#### Requests',
    '',
    `- wrk: ${int(load.requests)} requests in ${load.durationS.toFixed(1)} s, **${int(load.rps)} requests/s**; latency p50 ${(load.p50Us / 1000).toFixed(2)} ms, p99 ${(load.p99Us / 1000).toFixed(2)} ms; wrk used ${Math.round((load.cpuS / load.durationS) * 100)}% of a core (${((load.cpuS / Math.max(1, load.requests)) * 1e6).toFixed(0)} µs a request); ${int(load.non2xx)} answers not 2xx; socket errors: ${errors === 0 ? 'none' : `connect ${load.errors.connect}, read ${load.errors.read}, write ${load.errors.write}, timeout ${load.errors.timeout}`}.`,
    '- The gateway’s answers since it started (its /metrics; the setup’s six probe requests included):',
    '',
    answersTable(last),
    '',
    '#### Money',
    '',
    ...moneyLines(report),
    '',
    '#### Growth',
    '',
    ...growth(report),
    '',
    '#### Gateway log',
    '',
    report.log.lines === 0
      ? '- No warnings or errors.'
      : `- ${report.log.lines} lines: ${report.log.samples.join('; ')}`,
    '',
  ].join('\n')
}
