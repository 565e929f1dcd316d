/**
 * Creating or changing a guardrail: name, allowed models, monthly budget and content filters. Every
 * field is checked on submit with the rules the server applies (shared/schemas/admin/field-rules.ts),
 * each problem under its field; what only the server knows (the catalog, an RE2 pattern's syntax, a
 * name already taken) comes back as its refusal, shown under the field it names. An edit sends only what
 * changed. Keys are assigned on the guardrail's card, not here.
 */
import { createSignal, Show } from 'solid-js'
import { GUARDRAIL_LABELS, GUARDRAIL_NAME } from '../../../../shared/schemas/admin/field-rules.ts'
import type {
  Guardrail,
  GuardrailChanges,
  NewGuardrail,
} from '../../../../shared/schemas/admin/policy.ts'
import { api, ApiError } from '../../api.ts'
import { getRouting } from '../../data.ts'
import { focusFirstInvalid, refuse, useFormCheck } from '../../form-check.ts'
import { createOptional } from '../../reading.ts'
import { ModelPicker } from '../../model-picker.tsx'
import { fieldError, formError, TextField, useSubmit } from '../../forms.tsx'
import { Button, ErrorNotice } from '../../ui.tsx'
import { readUsd } from './amounts.ts'
import { changedFields } from './changes.ts'
import {
  FilterEditor,
  filterParam,
  fromDraft,
  readFilters,
  toDraft,
  type FilterDraft,
} from './filter-editor.tsx'

const FIELDS = Object.keys(GUARDRAIL_LABELS)

export function GuardrailForm(props: {
  guardrail?: Guardrail
  onSaved: (guardrail: Guardrail | undefined) => void
  onCancel: () => void
}) {
  const start = props.guardrail
  // Only what the account's routing allows is offered; the guardrail could let through nothing else.
  const routing = createOptional(() => getRouting())
  const [name, setName] = createSignal(start?.name ?? '')
  const [models, setModels] = createSignal<string[]>(start?.models ?? [])
  const [budget, setBudget] = createSignal(start?.budgetUsd ?? '')
  const [filters, setFilters] = createSignal<FilterDraft[]>((start?.filters ?? []).map(toDraft))
  const submit = useSubmit()

  const readName = () => {
    const trimmed = name().trim()
    if (trimmed.length < GUARDRAIL_NAME.minLength)
      throw refuse('name', 'Give the guardrail a name.')
    if (trimmed.length > GUARDRAIL_NAME.maxLength)
      throw refuse('name', `Use at most ${GUARDRAIL_NAME.maxLength} characters.`)
    return trimmed
  }
  const check = useFormCheck(
    (field): NewGuardrail => ({
      name: field(readName) ?? '',
      models: models().length > 0 ? models() : null,
      budgetNano: field(() => readUsd(budget(), 'budgetNano', { positive: true })) ?? null,
      filters: readFilters(filters(), field),
    }),
  )
  /** The server's refusal of this field; a filter's is placed on the filter field it names. */
  const refusal = (param: string) => {
    const failure = submit.error()
    if (failure instanceof ApiError && failure.param?.startsWith('filters'))
      return param.startsWith('filters') && filterParam(failure.param, failure.message) === param
        ? failure.message
        : null
    return fieldError(failure, param)
  }
  const error = (param: string) => check.error(param) ?? refusal(param)

  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const next = check.take()
    if (!next) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const saved = await submit.run(async () => {
      if (!start) return { guardrail: await api<Guardrail>('POST', '/guardrails', next) }
      const before: NewGuardrail = {
        name: start.name,
        models: start.models,
        budgetNano: start.budgetNano,
        filters: start.filters.map((filter) => fromDraft(toDraft(filter))),
      }
      const changed: GuardrailChanges = changedFields(before, next)
      return {
        guardrail:
          Object.keys(changed).length === 0
            ? undefined
            : await api<Guardrail>('PATCH', `/guardrails/${start.id}`, changed),
      }
    })
    if (saved) props.onSaved(saved.guardrail)
    else focusFirstInvalid(form)
  }
  const otherError = () => formError(submit.error(), FIELDS)

  return (
    <form class="stack" onSubmit={save} novalidate>
      <TextField
        label={GUARDRAIL_LABELS.name}
        value={name()}
        onValue={setName}
        maxlength={GUARDRAIL_NAME.maxLength}
        required
        autocomplete="off"
        error={error('name')}
      />
      <ModelPicker
        choices="exact"
        label={GUARDRAIL_LABELS.models}
        allowed={routing.latest()?.models}
        value={models()}
        onChange={setModels}
        emptyText="Any model (no restriction)"
        hint="None chosen: the guardrail does not restrict models. A key may call only models allowed by the key, its guardrail and the account's routing."
        error={error('models')}
      />
      <TextField
        label={GUARDRAIL_LABELS.budgetNano}
        inputmode="decimal"
        value={budget()}
        onValue={setBudget}
        hint="Spend across all keys assigned to the guardrail, per UTC month; requests past it are refused. Empty: no budget."
        error={error('budgetNano')}
      />
      <FilterEditor filters={filters()} onChange={setFilters} error={error} />
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
