/**
 * The model picker of paid chat: one choice from the public catalog (`GET /api/v1/models`, the
 * dashboard's shared catalog query), automatic choices first, then every model with its price per
 * million tokens, in a native select. Aliases are left out: each names a model already listed; image
 * models too: they do not chat; and what the account's routing restrictions forbid.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createEffect } from 'solid-js'
import { canChat, getCatalog, getRouting, routedEntries, type CatalogEntry } from '../../data.ts'
import { usd } from '../../format.ts'
import { SelectField } from '../../forms.tsx'
import { Loaded } from '../../ui.tsx'

export type ModelOption = { value: string; label: string }

/** The default choice: the general automatic choice when the catalog has it. */
export const PREFERRED_MODEL = 'service/auto'

/** `allowed`: the exact model IDs the account's routing allows (none: any). */
function modelOptions(catalog: CatalogEntry[], allowed?: readonly string[] | null): ModelOption[] {
  const entries = routedEntries(catalog, allowed).filter(
    (entry) => !entry.alias_of && canChat(entry),
  )
  const autos = entries
    .filter((entry) => entry.auto_candidates)
    .sort((a, b) => a.id.localeCompare(b.id))
  const models = entries
    .filter((entry) => !entry.auto_candidates)
    .sort((a, b) => a.id.localeCompare(b.id))
  return [
    ...autos.map((entry) => ({
      value: entry.id,
      label: `${entry.id} (automatic choice${entry.free ? ', free models only' : ''})`,
    })),
    ...models.map((entry) => ({ value: entry.id, label: modelLabel(entry) })),
  ]
}

function modelLabel(entry: CatalogEntry): string {
  const name =
    entry.display_name && entry.display_name !== entry.id
      ? `${entry.display_name} (${entry.id})`
      : entry.id
  if (entry.free) return `${name}, free`
  const { input, output } = entry.pricing ?? {}
  if (input === undefined || output === undefined) return name
  return `${name}, ${usd(input)} in / ${usd(output)} out per 1M tokens`
}

export function PaidModelPicker(props: { value: string; onValue: (model: string) => void }) {
  // Only what the account's routing allows: a model it forbids would be refused 403.
  const options = createAsync(async () => {
    const [catalog, routing] = await Promise.all([
      getCatalog(),
      getRouting().catch(() => undefined),
    ])
    return modelOptions(catalog, routing?.models)
  })
  return (
    <Loaded data={options} retry={() => revalidate(getCatalog.key)} loading="Loading models…">
      {(list) => <ModelSelect options={list} value={props.value} onValue={props.onValue} />}
    </Loaded>
  )
}

function ModelSelect(props: {
  options: ModelOption[]
  value: string
  onValue: (model: string) => void
}) {
  // Until the user picks, the first list chooses the default.
  createEffect(() => {
    const list = props.options
    if (!list.length || list.some((option) => option.value === props.value)) return
    props.onValue(list.find((option) => option.value === PREFERRED_MODEL)?.value ?? list[0]!.value)
  })
  return (
    <SelectField
      label="Model"
      name="model"
      value={props.value}
      onValue={props.onValue}
      options={props.options}
      hint="Charged at this model's price per token, like an API request."
    />
  )
}
