/**
 * The ledger: every credit, charge, write-off and adjustment of the account, newest first, filtered by
 * kind and time (kept in the address), older entries a page at a time. The balance is the sum of the
 * amounts; a write-off is cost the service absorbed (its reason says why).
 */
import { createEffect, createSignal, For, Show } from 'solid-js'
import type { LedgerEntry, LedgerKind } from '../../../../shared/schemas/admin/billing.ts'
import { getLedger, LEDGER_FILTERS, readLedgerPage } from '../../data.ts'
import { count, usd } from '../../format.ts'
import { createKeysetList, KeysetView } from '../../keyset-list.tsx'
import { isoFromLocalInput, localInputValue, localZoneName } from '../../time-inputs.ts'
import { LocalTimeRange, SelectField, useTimeRangeCheck } from '../../forms.tsx'
import { Badge, Button, Card, CopyButton, Empty } from '../../ui.tsx'
import { useUrlFilters } from '../../url-filters.ts'

const KINDS: Record<LedgerKind, { label: string; tone: 'good' | 'neutral' | 'warn' }> = {
  credit: { label: 'Credit', tone: 'good' },
  charge: { label: 'Charge', tone: 'neutral' },
  writeoff: { label: 'Write-off', tone: 'warn' },
  adjustment: { label: 'Adjustment', tone: 'neutral' },
}

/** Write-off reasons the gateway records, in words (credit reasons are the operator's own text). */
const REASONS: Record<string, string> = {
  stream_broken_early: 'The provider broke the stream before 50 output tokens: not charged',
  cost_above_hold: 'The cost passed what the request held: the rest is not charged',
  forgiven: 'Not charged',
  hold_missing: 'The hold had expired before the charge: not charged',
  recovered: 'Recovered after a restart',
}

const KIND_OPTIONS = [
  { value: '', label: 'All entries' },
  { value: 'credit', label: 'Credits' },
  { value: 'charge', label: 'Charges' },
  { value: 'writeoff', label: 'Write-offs' },
  { value: 'adjustment', label: 'Adjustments' },
]

export function LedgerCard() {
  const filters = useUrlFilters(LEDGER_FILTERS)
  const list = createKeysetList({
    first: () => getLedger(filters.values()),
    older: (before) => readLedgerPage(filters.values(), before),
    key: getLedger.key,
  })

  const [kind, setKind] = createSignal('')
  const [from, setFrom] = createSignal('')
  const [to, setTo] = createSignal('')
  createEffect(() => {
    setKind(filters.value('kind'))
    setFrom(localInputValue(filters.value('from')))
    setTo(localInputValue(filters.value('to')))
  })
  const range = useTimeRangeCheck(from, to)
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    if (!range.take(event.currentTarget as HTMLFormElement)) return
    filters.apply({ kind: kind(), from: isoFromLocalInput(from()), to: isoFromLocalInput(to()) })
  }

  return (
    <Card title="Ledger">
      <form class="filters" onSubmit={submit} aria-label="Filter the ledger">
        <SelectField label="Entries" value={kind()} onValue={setKind} options={KIND_OPTIONS} />
        <LocalTimeRange
          from={from()}
          to={to()}
          onFrom={setFrom}
          onTo={setTo}
          error={range.error()}
        />
        <div class="filter-actions">
          <Button type="submit" variant="primary">
            Apply filters
          </Button>
          <Show when={filters.active()}>
            <Button variant="ghost" onClick={() => filters.apply({})}>
              Clear
            </Button>
          </Show>
        </div>
      </form>
      <KeysetView
        list={list}
        loading="Loading the ledger…"
        shown={shown}
        empty={
          <Empty title={filters.active() ? 'No entries match these filters' : 'No entries yet'}>
            {filters.active()
              ? 'Try another kind or time range.'
              : 'Credits and the charges of requests appear here.'}
          </Empty>
        }
      >
        <div class="table-wrap">
          <table class="data narrow-cards">
            <caption class="visually-hidden">Ledger entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time ({localZoneName()})</th>
                <th scope="col">Entry</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col" class="num">
                  Written off
                </th>
                <th scope="col">Reference</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              <For each={list.items()}>{(entry) => <LedgerRow entry={entry} />}</For>
            </tbody>
          </table>
        </div>
      </KeysetView>
    </Card>
  )
}

function shown(entries: number): string {
  return entries === 1 ? '1 entry shown' : `${count(entries)} entries shown`
}

function LedgerRow(props: { entry: LedgerEntry }) {
  const entry = () => props.entry
  const kind = () => KINDS[entry().kind]
  return (
    <tr>
      <td class="nowrap" data-label="Time">
        <time datetime={entry().time} title={entry().time}>
          {new Date(entry().time).toLocaleString(undefined, {
            dateStyle: 'medium',
            timeStyle: 'medium',
          })}
        </time>
      </td>
      <td data-label="Entry">
        <Badge tone={kind().tone}>{kind().label}</Badge>
      </td>
      <td class="num nowrap" data-label="Amount" classList={{ credit: entry().amountNano > 0 }}>
        {entry().amountNano > 0 ? '+' : ''}
        {usd(entry().amountUsd)}
      </td>
      <td class="num nowrap" data-label="Written off">
        {entry().writtenOffNano > 0 ? usd(entry().writtenOffUsd) : '—'}
      </td>
      <td data-label="Reference">
        <div class="row tight center">
          <code class="mono small">{entry().reference}</code>
          <CopyButton
            text={entry().reference}
            label={`Copy ${entry().kind === 'charge' || entry().kind === 'writeoff' ? 'request ID' : 'reference'} ${entry().reference}`}
            variant="ghost"
          />
        </div>
      </td>
      <td class="small" data-label="Reason" title={entry().reason ?? undefined}>
        {entry().reason ? (REASONS[entry().reason!] ?? entry().reason) : '—'}
      </td>
    </tr>
  )
}
