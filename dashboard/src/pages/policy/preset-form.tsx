/**
 * Creating or replacing a preset (`PUT /presets/:slug`): the model, up to three fallbacks, and default
 * parameters used when a request sets none. The slug is fixed once made (clients call it by name).
 */
import { createSignal, Show } from 'solid-js'
import type { Preset, PresetBody, PresetParams } from '../../../../shared/schemas/admin/policy.ts'
import { api, ApiError } from '../../api.ts'
import { ModelPicker } from '../../model-picker.tsx'
import { Field, TextField, useSubmit } from '../../forms.tsx'
import { Button, ErrorNotice } from '../../ui.tsx'
import { asText, readDecimal, readWhole } from './amounts.ts'

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/
const FIELDS = [
  'slug',
  'model',
  'fallbacks',
  'params.temperature',
  'params.top_p',
  'params.max_tokens',
  'params.stop',
]

export function PresetForm(props: {
  preset?: Preset
  taken: readonly string[]
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
  /** A refusal of this field or of one of its items (`fallbacks[1]`). */
  const error = (field: string) => {
    const failure = submit.error()
    if (!(failure instanceof ApiError) || !failure.param) return null
    return failure.param === field || failure.param.startsWith(`${field}[`) ? failure.message : null
  }
  const refuse = (param: string, message: string) =>
    new ApiError(400, 'invalid_request', message, param)

  const read = (): { slug: string; body: PresetBody } => {
    const name = slug().trim()
    if (!SLUG.test(name))
      throw refuse(
        'slug',
        'Use 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen.',
      )
    if (!start && props.taken.includes(name))
      throw refuse('slug', `@preset/${name} exists already: edit it instead.`)
    const chosen = model()[0]
    if (!chosen) throw refuse('model', 'Choose the model the preset calls.')
    const params: PresetParams = {}
    const temp = readDecimal(temperature(), 'params.temperature', 0, 2)
    if (temp !== undefined) params.temperature = temp
    const top = readDecimal(topP(), 'params.top_p', 0, 1)
    if (top !== undefined) params.top_p = top
    const max = readWhole(maxTokens(), 'params.max_tokens', 1)
    if (max !== null) params.max_tokens = max
    const stops = stop()
      .split('\n')
      .filter((line) => line.trim() !== '')
    if (stops.length > 4) throw refuse('params.stop', 'At most 4 stop sequences.')
    if (stops.length > 0) params.stop = stops
    return { slug: name, body: { model: chosen, fallbacks: fallbacks(), params } }
  }

  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    await submit.run(async () => {
      const { slug: name, body } = read()
      props.onSaved(await api<Preset>('PUT', `/presets/${encodeURIComponent(name)}`, body))
    })
  }
  const otherError = () => {
    const failure = submit.error()
    if (!failure) return undefined
    const param = failure instanceof ApiError ? failure.param : null
    return param && FIELDS.some((field) => param === field || param.startsWith(`${field}[`))
      ? undefined
      : failure
  }

  return (
    <form class="stack" onSubmit={save} novalidate>
      <TextField
        label="Slug"
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
        label="Model"
        value={model()}
        onChange={setModel}
        emptyText="None chosen yet"
        hint="A model ID, an alias or an automatic choice (service/auto…)."
        error={error('model')}
      />
      <ModelPicker
        choices="any"
        max={3}
        label="Fallbacks"
        value={fallbacks()}
        onChange={setFallbacks}
        emptyText="No fallbacks"
        hint="Tried in order when the model cannot start an answer. Up to 3."
        error={error('fallbacks')}
      />
      <fieldset class="form-group">
        <legend>Default parameters</legend>
        <p class="hint">Used when a request does not set them. Empty: the model's own default.</p>
        <div class="row">
          <TextField
            label="Temperature"
            inputmode="decimal"
            value={temperature()}
            onValue={setTemperature}
            hint="0 to 2"
            error={error('params.temperature')}
          />
          <TextField
            label="Top P"
            inputmode="decimal"
            value={topP()}
            onValue={setTopP}
            hint="0 to 1"
            error={error('params.top_p')}
          />
          <TextField
            label="Max tokens"
            inputmode="numeric"
            value={maxTokens()}
            onValue={setMaxTokens}
            hint="Output limit"
            error={error('params.max_tokens')}
          />
        </div>
        <Field label="Stop sequences" hint="One a line, up to 4." error={error('params.stop')}>
          {(id, describedBy) => (
            <textarea
              id={id}
              aria-describedby={describedBy}
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
