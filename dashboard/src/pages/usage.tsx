/**
 * Usage: spend and tokens per UTC day over 7, 30 or 90 days, in total and by model and key, from the
 * hourly rollup (`GET /admin/v1/usage`). Totals come from the server as they are; every chart has a
 * name, a one-sentence summary and its numbers in a table beside it.
 */
import { A, createAsync, revalidate, useIsRouting } from '@solidjs/router'
import { createMemo, For, Show } from 'solid-js'
import { nanoToUsd } from '../../../shared/money.ts'
import type { UsageBucket } from '../../../shared/schemas/admin/usage.ts'
import { dayLabel, OTHER_COLOR, PALETTE, TimeChart, type ChartSeries } from '../chart.tsx'
import { getUsage, type UsageData } from '../data.ts'
import { compact, count, keyWithPrefix, usd } from '../format.ts'
import { createRefresh } from '../reading.ts'
import { Button, Card, Empty, Loaded, Page } from '../ui.tsx'
import { useUrlFilters } from '../url-filters.ts'
import {
  busiestDay,
  perDay,
  perGroup,
  periodFrom,
  type Group,
  type Period,
} from './usage/usage-data.ts'
import { NumbersTable } from './usage/numbers-table.tsx'
import { PeriodPicker } from './usage/period-picker.tsx'

const axisUsd = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  notation: 'compact',
  maximumSignificantDigits: 3,
})

/** Chart coordinates only: nano-USD to dollars as a float. */
const dollars = (nano: number) => nano / 1e9
const money = (nano: number) => usd(nanoToUsd(nano))

export default function Usage() {
  const filters = useUrlFilters(['days'] as const)
  const period = (): Period => periodFrom(filters.value('days'))
  const usage = createAsync(() => getUsage(period()))
  const refresh = createRefresh(getUsage.key)
  // A new period is read while the address changes: Refresh is busy then too.
  const routing = useIsRouting()
  return (
    <Page
      title="Usage"
      description="Spend and tokens per day (UTC), in total and by model and key. Requests count here within a second or two after they finish."
      actions={
        <>
          <PeriodPicker
            value={period()}
            onChange={(days) => filters.apply({ days: days === 30 ? '' : String(days) })}
          />
          <Button
            variant="ghost"
            busy={refresh.busy() || routing()}
            onClick={() => void refresh.run()}
          >
            Refresh
          </Button>
        </>
      }
    >
      <Loaded data={usage} retry={() => revalidate(getUsage.key)}>
        {(data) => (
          <Show
            when={data.total.totals.requests > 0}
            fallback={
              <Empty title={`No usage in the last ${period()} days`}>
                Requests made with this account's keys are counted here.{' '}
                <A href="/dashboard/keys">Create a key</A> or{' '}
                <A href="/dashboard/playground">try a model in the playground</A>.
              </Empty>
            }
          >
            <UsageCharts data={data} period={period()} />
          </Show>
        )}
      </Loaded>
    </Page>
  )
}

function UsageCharts(props: { data: UsageData; period: Period }) {
  const days = () => props.data.days
  const daily = createMemo(() => perDay(props.data.total, days()))
  const models = createMemo(() =>
    perGroup(props.data.byModel, days(), (bucket) => bucket.model || '(no model named)'),
  )
  const keys = createMemo(() => perGroup(props.data.byKey, days(), keyLabel))
  const totals = () => props.data.total.totals
  const spendSeries = createMemo((): ChartSeries[] => [
    {
      label: 'Spend',
      color: PALETTE[0]!,
      values: daily().chargedNano.map(dollars),
      shown: daily().chargedNano.map(money),
    },
  ])
  const tokenSeries = createMemo((): ChartSeries[] => [
    {
      label: 'Input tokens',
      color: PALETTE[0]!,
      values: daily().inputTokens,
      shown: daily().inputTokens.map(count),
    },
    {
      label: 'Output tokens',
      color: PALETTE[1]!,
      values: daily().outputTokens,
      shown: daily().outputTokens.map(count),
    },
  ])
  const busiest = () => busiestDay(days(), daily().chargedNano)
  const spendSummary = () =>
    `${usd(totals().chargedUsd)} spent over the last ${props.period} days` +
    (busiest() ? `; the most on ${dayLabel(busiest()!.day)}: ${usd(busiest()!.usd)}.` : '.')
  return (
    <>
      <div class="grid stats usage-totals">
        <Stat
          label="Spend"
          value={usd(totals().chargedUsd)}
          note={
            totals().costNano !== totals().chargedNano
              ? `${usd(totals().costUsd)} at catalog prices`
              : undefined
          }
        />
        <Stat
          label="Requests"
          value={count(totals().requests)}
          note={`${count(totals().errors)} failed`}
        />
        <Stat label="Input tokens" value={count(totals().inputTokens)} />
        <Stat label="Output tokens" value={count(totals().outputTokens)} />
      </div>

      <Card title="Spend">
        <TimeChart
          label="Spend per day"
          summary={spendSummary()}
          days={days()}
          series={spendSeries()}
          kind="bars"
          axis={(value) => axisUsd.format(value)}
        />
        <NumbersTable
          summary="Table of daily spend"
          days={days()}
          columns={[
            { label: 'Spend', cells: daily().chargedNano.map(money) },
            { label: 'Requests', cells: daily().requests.map(count) },
          ]}
        />
      </Card>

      <Card title="Tokens">
        <TimeChart
          label="Tokens per day, input and output"
          summary={`${count(totals().inputTokens)} input and ${count(totals().outputTokens)} output tokens over the last ${props.period} days.`}
          days={days()}
          series={tokenSeries()}
          kind="lines"
          axis={(value) => compact(value)}
        />
        <NumbersTable
          summary="Table of daily tokens"
          days={days()}
          columns={[
            { label: 'Input tokens', cells: daily().inputTokens.map(count) },
            { label: 'Output tokens', cells: daily().outputTokens.map(count) },
          ]}
        />
      </Card>

      <GroupCard
        title="By model"
        what="model"
        chartLabel="Spend by model, each day"
        groups={models()}
        days={days()}
        period={props.period}
      />
      <GroupCard
        title="By key"
        what="key"
        chartLabel="Spend by key, each day"
        groups={keys()}
        days={days()}
        period={props.period}
      />
    </>
  )
}

function GroupCard(props: {
  title: string
  what: string
  chartLabel: string
  groups: Group[]
  days: number[]
  period: Period
}) {
  const series = createMemo((): ChartSeries[] =>
    props.groups.map((group, index) => ({
      label: group.label,
      color: group.other ? OTHER_COLOR : PALETTE[index % PALETTE.length]!,
      values: group.chargedNano.map(dollars),
      shown: group.chargedNano.map(money),
    })),
  )
  const top = () => props.groups[0]
  const summary = () =>
    top()
      ? `Spend per ${props.what} over the last ${props.period} days, ${props.groups.length} ${props.groups.length === 1 ? 'line' : 'lines'}; the most: ${top()!.label} with ${money(top()!.totals.chargedNano)}.`
      : ''
  return (
    <Card title={props.title}>
      <TimeChart
        label={props.chartLabel}
        summary={summary()}
        days={props.days}
        series={series()}
        kind="lines"
        axis={(value) => axisUsd.format(value)}
      />
      <div class="table-wrap">
        <table class="data narrow-cards">
          <caption class="visually-hidden">{`Totals by ${props.what} over the last ${props.period} days`}</caption>
          <thead>
            <tr>
              <th scope="col">{props.what === 'model' ? 'Model' : 'Key'}</th>
              <th scope="col" class="num">
                Requests
              </th>
              <th scope="col" class="num">
                Input tokens
              </th>
              <th scope="col" class="num">
                Output tokens
              </th>
              <th scope="col" class="num">
                Spend
              </th>
            </tr>
          </thead>
          <tbody>
            <For each={props.groups}>
              {(group) => (
                <tr>
                  <th scope="row" class={group.other ? 'break' : 'mono break'}>
                    {group.label}
                  </th>
                  <td class="num" data-label="Requests">
                    {count(group.totals.requests)}
                  </td>
                  <td class="num" data-label="Input tokens">
                    {count(group.totals.inputTokens)}
                  </td>
                  <td class="num" data-label="Output tokens">
                    {count(group.totals.outputTokens)}
                  </td>
                  <td class="num" data-label="Spend">
                    {money(group.totals.chargedNano)}
                  </td>
                </tr>
              )}
            </For>
          </tbody>
        </table>
      </div>
      <NumbersTable
        summary={`Table of daily spend by ${props.what}`}
        days={props.days}
        columns={props.groups.map((group) => ({
          label: group.label,
          cells: group.chargedNano.map(money),
        }))}
      />
    </Card>
  )
}

function Stat(props: { label: string; value: string; note?: string }) {
  return (
    <div class="stat card">
      <span class="label">{props.label}</span>
      <span class="value">{props.value}</span>
      <Show when={props.note}>
        <span class="small muted">{props.note}</span>
      </Show>
    </div>
  )
}

function keyLabel(bucket: UsageBucket): string {
  const key = bucket.key
  if (!key) return '(unknown key)'
  if (!key.prefix) return key.id
  return keyWithPrefix(key)
}
