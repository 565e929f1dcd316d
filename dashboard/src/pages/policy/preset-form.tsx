/**
 * Creating or replacing a preset (`PUT /presets/:slug`): the model, up to three fallbacks, and default
 * parameters used when a request sets none. The slug is fixed once made (clients call it by name).
 */
import { createSignal, Show } from 'solid-js'
import {
  PRESET_LABELS,
  PRESET_MAX_FALLBACKS,
  PRESET_PARAM_RULES,
  PRESET_SLUG_PATTERN,
} from '../../../../shared/schemas/admin/field-rules.ts'
import type { Preset, PresetBody, PresetParams } from '../../../../shared/schemas/admin/policy.ts'
import { api } from '../../api.ts'
import { focusFirstInvalid, refuse, useFormCheck } from '../../form-check.ts'
import { ModelPicker } from '../../model-picker.tsx'
import { Field, fieldError, formError, TextField, useSubmit } from '../../forms.tsx'
import { Button, ErrorNotice } from '../../ui.tsx'
import { asText, readDecimal, readWhole } from './amounts.ts'

const SLUG = new RegExp(PRESET_SLUG_PATTERN)
const FIELDS = Object.keys(PRESET_LABELS)

export function PresetForm(props: {
  preset?: Preset
  taken: readonly string[]
  /** The models the account's routing allows (null: any), once read. */
  allowedModels: readonly string[] | null | undefined
  onSaved: (preset: Preset) => void
  onCancel: () => void
}) {
  const start = props.preset
  const [slug, setSlug] = createSignal(start?.slug ?? '')
  const [model, setModel] = createSignal<string[]>(start ? [start.model] : [])
  const [fallbacks, setFallbacks] = createSignal<string[]>(start?.fallbacks ?? [])
  const [temperature, setTemperature] = createSignal(asText(start?.params.temperature))
  const [topP, setTopP] = createSignal(asText(start?.params.top_p))
  const [maxTokens, setMaxTokens] = createSignal(asText(start?.params.max_tokens))
  const [stop, setStop] = createSignal((start?.params.stop ?? []).join('\n'))
  const submit = useSubmit()

  const readSlug = () => {
    const name = slug().trim()
    if (!name) throw refuse('slug', 'Enter a slug: clients call the preset by it.')
    if (!SLUG.test(name))
      throw refuse(
        'slug',
        'Use 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen.',
      )
    if (!start && props.taken.includes(name))
      throw refuse('slug', `@preset/${name} exists already: edit it instead.`)
    return name
  }
  const readModel = () => {
    const chosen = model()[0]
    if (!chosen) throw refuse('model', 'Choose the model the preset calls.')
    return chosen
  }
  const readStops = () => {
    const stops = stop()
      .split('\n')
      .filter((line) => line.trim() !== '')
    if (stops.length > PRESET_PARAM_RULES.stop.maxItems)
      throw refuse(
        'params.stop',
        `At most ${PRESET_PARAM_RULES.stop.maxItems} stop sequences, one a line.`,
      )
    return stops
  }
  const check = useFormCheck((field) => {
    const name = field(readSlug)
    const chosen = field(readModel)
    const params: PresetParams = {}
    const temp = field(() =>
      readDecimal(temperature(), 'params.temperature', PRESET_PARAM_RULES.temperature),
    )
    if (temp !== undefined) params.temperature = temp
    const top = field(() => readDecimal(topP(), 'params.top_p', PRESET_PARAM_RULES.top_p))
    if (top !== undefined) params.top_p = top
    const max = field(() =>
      readWhole(maxTokens(), 'params.max_tokens', PRESET_PARAM_RULES.max_tokens),
    )
    if (max !== null && max !== undefined) params.max_tokens = max
    const stops = field(readStops)
    if (stops?.length) params.stop = stops
    const body: PresetBody = { model: chosen ?? '', fallbacks: fallbacks(), params }
    return { slug: name ?? '', body }
  })
  /** A problem of this field or of one of its items (`fallbacks[1]`): the form's own check first. */
  const error = (field: string) => check.error(field) ?? fieldError(submit.error(), field)

  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const checked = check.take()
    if (!checked) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const saved = await submit.run(() =>
      api<Preset>('PUT', `/presets/${encodeURIComponent(checked.slug)}`, checked.body),
    )
    if (saved) props.onSaved(saved)
    else focusFirstInvalid(form)
  }
  const otherError = () => formError(submit.error(), FIELDS)
  const routed = () =>
    props.allowedModels ? " the account's routing allows (see the Routing page)" : ''

  return (
    <form class="stack" onSubmit={save} novalidate>
      <TextField
        label={PRESET_LABELS.slug}
        value={slug()}
        onValue={(value) => setSlug(value.toLowerCase())}
        readonly={!!start}
        required
        maxlength={63}
        autocomplete="off"
        spellcheck={false}
        class="mono"
        hint={
          <>
            Clients send <code>"model": "@preset/{slug().trim() || '<slug>'}"</code>.
            {start
              ? ' A slug cannot be changed: make a new preset instead.'
              : ' Lowercase letters, digits and hyphens.'}
          </>
        }
        error={error('slug')}
      />
      <ModelPicker
        choices="any"
        max={1}
        label={PRESET_LABELS.model}
        allowed={props.allowedModels}
        value={model()}
        onChange={setModel}
        emptyText="None chosen yet"
        hint={`A model ID, an alias or an automatic choice (service/auto…)${routed()}.`}
        error={error('model')}
      />
      <ModelPicker
        choices="any"
        max={PRESET_MAX_FALLBACKS}
        label={PRESET_LABELS.fallbacks}
        allowed={props.allowedModels}
        value={fallbacks()}
        onChange={setFallbacks}
        emptyText="No fallbacks"
        hint={`Tried in order when the model cannot start an answer. Up to ${PRESET_MAX_FALLBACKS}.`}
        error={error('fallbacks')}
      />
      <fieldset class="form-group">
        <legend>Default parameters</legend>
        <p class="hint">Used when a request does not set them. Empty: the model's own default.</p>
        <div class="row">
          <TextField
            label={PRESET_LABELS['params.temperature']}
            inputmode="decimal"
            value={temperature()}
            onValue={setTemperature}
            hint={`${PRESET_PARAM_RULES.temperature.minimum} to ${PRESET_PARAM_RULES.temperature.maximum}`}
            error={error('params.temperature')}
          />
          <TextField
            label={PRESET_LABELS['params.top_p']}
            inputmode="decimal"
            value={topP()}
            onValue={setTopP}
            hint={`${PRESET_PARAM_RULES.top_p.minimum} to ${PRESET_PARAM_RULES.top_p.maximum}`}
            error={error('params.top_p')}
          />
          <TextField
            label={PRESET_LABELS['params.max_tokens']}
            inputmode="numeric"
            value={maxTokens()}
            onValue={setMaxTokens}
            hint="Output limit"
            error={error('params.max_tokens')}
          />
        </div>
        <Field
          label={PRESET_LABELS['params.stop']}
          hint={`One a line, up to ${PRESET_PARAM_RULES.stop.maxItems}.`}
          error={error('params.stop')}
        >
          {(id, describedBy) => (
            <textarea
              id={id}
              aria-describedby={describedBy()}
              aria-invalid={error('params.stop') ? 'true' : undefined}
              rows={3}
              value={stop()}
              onInput={(event) => setStop(event.currentTarget.value)}
            />
          )}
        </Field>
      </fieldset>
      <Show when={otherError()}>
        <ErrorNotice error={otherError()} />
      </Show>
      <div class="dialog-actions">
        <Button variant="ghost" onClick={() => props.onCancel()}>
          Cancel
        </Button>
        <Button type="submit" variant="primary" busy={submit.busy()}>
          Save preset
        </Button>
      </div>
    </form>
  )
}
