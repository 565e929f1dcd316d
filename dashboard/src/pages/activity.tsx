/**
 * Activity: the account's requests, newest first, from the request log: when, which key and model, the
 * provider, tokens, cost and outcome. Filters (key, model, status, time range) live in the address;
 * older requests load a page at a time. The record writer flushes within a second or two, so a request
 * that just finished may need a Refresh.
 */
import { A } from '@solidjs/router'
import { createEffect, createSignal, For, Show } from 'solid-js'
import { errorTable } from '../../../shared/errors.ts'
import type { ApiKey } from '../../../shared/schemas/admin/keys.ts'
import { ACTIVITY_FILTERS, getActivity, getKeys, getUsedModels, readActivityPage } from '../data.ts'
import { count, keyWithPrefix } from '../format.ts'
import { createKeysetList, KeysetView } from '../keyset-list.tsx'
import { createOptional } from '../reading.ts'
import { isoFromLocalInput, localInputValue, localZoneName } from '../time-inputs.ts'
import { Field, LocalTimeRange, SelectField, useTimeRangeCheck } from '../forms.tsx'
import { Button, Empty, Page } from '../ui.tsx'
import { useUrlFilters, type UrlFilters } from '../url-filters.ts'
import { ActivityRow } from './activity/activity-row.tsx'

const PHRASES: Record<number, string> = {
  200: 'OK',
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Too large',
  429: 'Too many requests',
  500: 'Server error',
  502: 'Bad gateway',
  503: 'Unavailable',
  504: 'Timed out',
}

/** Every status the service answers with: 200 and the statuses of the error table. */
const STATUSES = [...new Set([200, ...Object.values(errorTable).map((spec) => spec.status)])].sort(
  (a, b) => a - b,
)

const STATUS_OPTIONS = [
  { value: '', label: 'Any status' },
  { value: 'ok', label: 'Succeeded (below 400)' },
  { value: 'error', label: 'Failed (400 and above)' },
  ...STATUSES.map((status) => ({
    value: String(status),
    label: PHRASES[status] ? `${status} ${PHRASES[status]}` : String(status),
  })),
]

export default function Activity() {
  const filters = useUrlFilters(ACTIVITY_FILTERS)
  // Key names and the models used lately only fill in the filters and rows: the list shows without them.
  const keys = createOptional(() => getKeys())
  const models = createOptional(() => getUsedModels())
  const list = createKeysetList({
    first: () => getActivity(filters.values()),
    older: (before) => readActivityPage(filters.values(), before),
    key: getActivity.key,
  })

  const keyOf = (keyId: string) => keys.latest()?.keys.find((entry) => entry.id === keyId)

  return (
    <Page
      title="Activity"
      description="Every request made with this account's keys, newest first. A request shows here within a second or two after it finishes."
      actions={
        <Button onClick={() => void list.reload()} busy={list.reloading()}>
          Refresh
        </Button>
      }
    >
      <ActivityFilters
        filters={filters}
        keys={keys.latest()?.keys ?? []}
        models={models.latest() ?? []}
      />
      <KeysetView
        list={list}
        loading="Loading requests…"
        shown={shown}
        empty={
          <Show
            when={filters.active()}
            fallback={
              <Empty title="No requests yet">
                Requests made with this account's keys appear here.{' '}
                <A href="/dashboard/keys">Create a key</A> or{' '}
                <A href="/dashboard/playground">try a model in the playground</A>.
              </Empty>
            }
          >
            <Empty title="No requests match these filters">
              <Button variant="ghost" onClick={() => filters.apply({})}>
                Clear filters
              </Button>
            </Empty>
          </Show>
        }
      >
        <div class="table-wrap">
          <table class="activity-table narrow-cards">
            <caption class="visually-hidden">Requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time ({localZoneName()})</th>
                <th scope="col">Request ID</th>
                <th scope="col">Key</th>
                <th scope="col">Model</th>
                <th scope="col">Provider</th>
                <th scope="col" class="num">
                  Tokens in / out
                </th>
                <th scope="col" class="num">
                  Cost
                </th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              <For each={list.items()}>
                {(item) => <ActivityRow item={item} apiKey={keyOf(item.keyId)} />}
              </For>
            </tbody>
          </table>
        </div>
      </KeysetView>
    </Page>
  )
}

function ActivityFilters(props: {
  filters: UrlFilters<(typeof ACTIVITY_FILTERS)[number]>
  keys: ApiKey[]
  models: string[]
}) {
  const [keyId, setKeyId] = createSignal('')
  const [model, setModel] = createSignal('')
  const [status, setStatus] = createSignal('')
  const [from, setFrom] = createSignal('')
  const [to, setTo] = createSignal('')
  // The form follows the address (back and forward buttons, "Clear filters").
  createEffect(() => {
    setKeyId(props.filters.value('keyId'))
    setModel(props.filters.value('model'))
    setStatus(props.filters.value('status'))
    setFrom(localInputValue(props.filters.value('from')))
    setTo(localInputValue(props.filters.value('to')))
  })
  const keyOptions = () => {
    const options = [
      { value: '', label: 'All keys' },
      ...props.keys.map((key) => ({
        value: key.id,
        label: keyWithPrefix(key),
      })),
    ]
    if (keyId() && !options.some((option) => option.value === keyId()))
      options.push({ value: keyId(), label: keyId() })
    return options
  }
  const modelOptions = () => {
    // The models this account used in the last 90 days.
    const options = [
      { value: '', label: 'All models' },
      ...props.models.map((id) => ({ value: id, label: id })),
    ]
    if (model() && !props.models.includes(model())) options.push({ value: model(), label: model() })
    return options
  }
  const range = useTimeRangeCheck(from, to)
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    if (!range.take(event.currentTarget as HTMLFormElement)) return
    props.filters.apply({
      keyId: keyId(),
      model: model(),
      status: status(),
      from: isoFromLocalInput(from()),
      to: isoFromLocalInput(to()),
    })
  }
  return (
    <form class="filters" onSubmit={submit} aria-label="Filter requests">
      <ListSelect label="Key" value={keyId()} onValue={setKeyId} options={keyOptions()} />
      <ListSelect label="Model" value={model()} onValue={setModel} options={modelOptions()} />
      <SelectField label="Status" value={status()} onValue={setStatus} options={STATUS_OPTIONS} />
      <LocalTimeRange from={from()} to={to()} onFrom={setFrom} onTo={setTo} error={range.error()} />
      <div class="filter-actions">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        <Show when={props.filters.active()}>
          <Button variant="ghost" onClick={() => props.filters.apply({})}>
            Clear
          </Button>
        </Show>
      </div>
    </form>
  )
}

/**
 * A select whose options arrive after the page (keys, models): each option says whether it is the chosen
 * one, so the choice from the address holds when the list is drawn again.
 */
function ListSelect(props: {
  label: string
  value: string
  onValue: (value: string) => void
  options: { value: string; label: string }[]
}) {
  return (
    <Field label={props.label}>
      {(id, describedBy) => (
        <select
          id={id}
          aria-describedby={describedBy()}
          onChange={(event) => props.onValue(event.currentTarget.value)}
        >
          <For each={props.options}>
            {(option) => (
              <option value={option.value} selected={option.value === props.value}>
                {option.label}
              </option>
            )}
          </For>
        </select>
      )}
    </Field>
  )
}

function shown(requests: number): string {
  return requests === 1 ? '1 request shown' : `${count(requests)} requests shown`
}
