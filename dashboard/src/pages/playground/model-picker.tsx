/**
 * The model picker of paid chat: one choice from the public catalog (`GET /api/v1/models`, read through
 * the dashboard's shared catalog read), automatic choices first, then every model with its price per
 * million tokens, in a native select. Aliases are left out: each names a model already listed.
 */
import { createEffect, createResource, Show } from 'solid-js'
import { usd } from '../../format.ts'
import { readCatalog, type CatalogEntry } from '../../model-picker.tsx'
import { SelectField } from '../../forms.tsx'
import { ErrorNotice, Loading } from '../../ui.tsx'

export type ModelOption = { value: string; label: string }

/** The default choice: the general automatic choice when the catalog has it. */
export const PREFERRED_MODEL = 'service/auto'

async function loadModels(): Promise<ModelOption[]> {
  const entries = (await readCatalog()).filter((entry) => !entry.alias_of)
  const autos = entries.filter((entry) => entry.auto_candidates).sort((a, b) => a.id.localeCompare(b.id))
  const models = entries.filter((entry) => !entry.auto_candidates).sort((a, b) => a.id.localeCompare(b.id))
  return [
    ...autos.map((entry) => ({ value: entry.id, label: `${entry.id} (automatic choice${entry.free ? ', free models only' : ''})` })),
    ...models.map((entry) => ({ value: entry.id, label: modelLabel(entry) })),
  ]
}

function modelLabel(entry: CatalogEntry): string {
  const name = entry.display_name && entry.display_name !== entry.id ? `${entry.display_name} (${entry.id})` : entry.id
  if (entry.free) return `${name}, free`
  if (!entry.pricing) return name
  return `${name}, ${usd(entry.pricing.input)} in / ${usd(entry.pricing.output)} out per 1M tokens`
}

export function PaidModelPicker(props: { value: string; onValue: (model: string) => void }) {
  const [options, { refetch }] = createResource(loadModels)
  // Until the user picks, the first load chooses the default.
  createEffect(() => {
    const list = options.latest
    if (!list?.length || list.some((option) => option.value === props.value)) return
    props.onValue(list.find((option) => option.value === PREFERRED_MODEL)?.value ?? list[0]!.value)
  })
  return (
    <Show when={!options.error} fallback={<ErrorNotice error={options.error} retry={refetch} />}>
      <Show when={options.latest} fallback={<Loading label="Loading models…" />}>
        {(list) => (
          <SelectField
            label="Model"
            name="model"
            value={props.value}
            onValue={props.onValue}
            options={list()}
            hint="Charged at this model's price per token, like an API request."
          />
        )}
      </Show>
    </Show>
  )
}
