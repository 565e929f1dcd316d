/** The report of `bun run bench --profile`: CPU per request by stage, thread and process, one column a cell. */
import { STAGES, type StageProfile } from './profile.ts'

const us = (value: number) => value.toFixed(1)

/** The profile as a Markdown table: one column per cell, µs of CPU per request. */
export function renderProfile(profiles: StageProfile[]): string {
  const header = `| CPU per request (µs) | ${profiles.map((p) => (p.stream ? 'streaming' : 'non-streaming')).join(' | ')} |`
  const rule = `| --- | ${profiles.map(() => '---:').join(' | ')} |`
  const row = (label: string, values: (p: StageProfile) => number) =>
    `| ${label} | ${profiles.map((p) => us(values(p))).join(' | ')} |`
  const rows = [header, rule]
  for (const stage of STAGES) {
    if (profiles.every((p) => (p.stagesUs.get(stage) ?? 0) < 0.05)) continue
    rows.push(row(`  ${stage}`, (p) => p.stagesUs.get(stage) ?? 0))
  }
  const sampled = (p: StageProfile) => [...p.stagesUs.values()].reduce((a, b) => a + b, 0)
  rows.push(row('**gateway JavaScript (sampled)**', sampled))
  rows.push(
    row('gateway main thread outside JavaScript (HTTP parsing, sockets, GC)', (p) =>
      Math.max(0, p.gatewayMainUs - sampled(p)),
    ),
  )
  rows.push(row('**gateway main thread**', (p) => p.gatewayMainUs))
  const threadNames = [...new Set(profiles.flatMap((p) => p.gatewayThreadsUs.map(([n]) => n)))]
  for (const name of threadNames)
    rows.push(
      row(
        `gateway thread "${name}"`,
        (p) => p.gatewayThreadsUs.find(([n]) => n === name)?.[1] ?? 0,
      ),
    )
  const gatewayTotal = (p: StageProfile) =>
    p.gatewayMainUs + p.gatewayThreadsUs.reduce((sum, [, value]) => sum + value, 0)
  rows.push(row('**gateway, all threads**', gatewayTotal))
  rows.push(row('Redis', (p) => p.redisUs))
  rows.push(row('PostgreSQL', (p) => p.postgresUs))
  rows.push(row('fake upstream', (p) => p.upstreamUs))
  rows.push(
    row(
      '**all processes but the load tool**',
      (p) => gatewayTotal(p) + p.redisUs + p.postgresUs + p.upstreamUs,
    ),
  )
  rows.push(
    `| requests per second | ${profiles.map((p) => Math.round(p.rps).toLocaleString('en-US')).join(' | ')} |`,
  )
  for (const p of profiles) {
    rows.push(
      '',
      `Costliest functions by their own time, ${p.stream ? 'streaming' : 'non-streaming'} (µs per request):`,
      '',
    )
    for (const [place, value] of p.topFunctionsUs) rows.push(`- ${us(value)} ${place}`)
  }
  return rows.join('\n')
}
