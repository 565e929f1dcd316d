/**
 * Creating or changing a guardrail: name, allowed models, monthly budget and content filters. An edit
 * sends only what changed. Keys are assigned on the guardrail's card, not here.
 */
import { createSignal, Show } from 'solid-js'
import type {
  Guardrail,
  GuardrailChanges,
  NewGuardrail,
} from '../../../../shared/schemas/admin/policy.ts'
import { api, ApiError } from '../../api.ts'
import { ModelPicker } from '../../model-picker.tsx'
import { fieldError, TextField, useSubmit } from '../../forms.tsx'
import { Button, ErrorNotice } from '../../ui.tsx'
import { readUsd } from './amounts.ts'
import { changedFields } from './changes.ts'
import { FilterEditor, fromDraft, toDraft, type FilterDraft } from './filter-editor.tsx'

const FIELDS = ['name', 'models', 'budgetNano', 'filters']

export function GuardrailForm(props: {
  guardrail?: Guardrail
  onSaved: (guardrail: Guardrail | undefined) => void
  onCancel: () => void
}) {
  const start = props.guardrail
  const [name, setName] = createSignal(start?.name ?? '')
  const [models, setModels] = createSignal<string[]>(start?.models ?? [])
  const [budget, setBudget] = createSignal(start?.budgetUsd ?? '')
  const [filters, setFilters] = createSignal<FilterDraft[]>((start?.filters ?? []).map(toDraft))
  const submit = useSubmit()
  const error = (param: string) => fieldError(submit.error(), param)

  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    await submit.run(async () => {
      const next: NewGuardrail = {
        name: name().trim(),
        models: models().length > 0 ? models() : null,
        budgetNano: readUsd(budget(), 'budgetNano', { positive: true }),
        filters: filters().map(fromDraft),
      }
      if (!next.name)
        throw new ApiError(400, 'invalid_request', 'Give the guardrail a name.', 'name')
      if (!start) return props.onSaved(await api<Guardrail>('POST', '/guardrails', next))
      const before: NewGuardrail = {
        name: start.name,
        models: start.models,
        budgetNano: start.budgetNano,
        filters: start.filters.map((filter) => fromDraft(toDraft(filter))),
      }
      const changed: GuardrailChanges = changedFields(before, next)
      props.onSaved(
        Object.keys(changed).length === 0
          ? undefined
          : await api<Guardrail>('PATCH', `/guardrails/${start.id}`, changed),
      )
    })
  }
  const otherError = () => {
    const failure = submit.error()
    return failure &&
      !(failure instanceof ApiError && failure.param && FIELDS.includes(failure.param))
      ? failure
      : undefined
  }

  return (
    <form class="stack" onSubmit={save} novalidate>
      <TextField
        label="Name"
        value={name()}
        onValue={setName}
        maxlength={100}
        required
        autocomplete="off"
        error={error('name')}
      />
      <ModelPicker
        choices="exact"
        label="Allowed models"
        value={models()}
        onChange={setModels}
        emptyText="Any model (no restriction)"
        hint="None chosen: the guardrail does not restrict models. A key may call only models allowed by the key, its guardrail and the account's routing."
        error={error('models')}
      />
      <TextField
        label="Monthly budget (USD)"
        inputmode="decimal"
        value={budget()}
        onValue={setBudget}
        hint="Spend across all keys assigned to the guardrail, per UTC month; requests past it are refused. Empty: no budget."
        error={error('budgetNano')}
      />
      <FilterEditor filters={filters()} onChange={setFilters} error={error('filters')} />
      <Show when={otherError()}>
        <ErrorNotice error={otherError()} />
      </Show>
      <div class="dialog-actions">
        <Button variant="ghost" onClick={() => props.onCancel()}>
          Cancel
        </Button>
        <Button type="submit" variant="primary" busy={submit.busy()}>
          Save guardrail
        </Button>
      </div>
    </form>
  )
}
