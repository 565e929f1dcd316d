/**
 * Creating a key or changing one: name, rate limits, spend caps, allowed models and guardrail. Caps left
 * empty on a new key get the server's defaults, which the form shows; "No cap" sends null. An edit sends
 * only the fields that changed.
 */
import { A } from '@solidjs/router'
import { createSignal, Show } from 'solid-js'
import type {
  ApiKey,
  ApiKeyChanges,
  CreatedApiKey,
  KeyDefaults,
  NewApiKey,
} from '../../../../shared/schemas/admin/keys.ts'
import {
  KEY_LABELS,
  KEY_LIMIT,
  LIMIT_LABELS,
} from '../../../../shared/schemas/admin/field-rules.ts'
import type { Guardrail } from '../../../../shared/schemas/admin/policy.ts'
import { usdToNano } from '../../../../shared/money.ts'
import { api } from '../../api.ts'
import { getRouting } from '../../data.ts'
import { focusFirstInvalid, refuse, useFormCheck } from '../../form-check.ts'
import { createOptional } from '../../reading.ts'
import { usd } from '../../format.ts'
import { ModelPicker } from '../../model-picker.tsx'
import { Checkbox, fieldError, formError, SelectField, TextField, useSubmit } from '../../forms.tsx'
import { Button, ErrorNotice } from '../../ui.tsx'
import { asText, readUsd, readWhole } from '../policy/amounts.ts'
import { changedFields } from '../policy/changes.ts'

type Props = {
  /** The key to change; none: a new key. */
  apiKey?: ApiKey
  defaults: KeyDefaults | undefined
  guardrails: readonly Guardrail[] | undefined
  onCreated: (created: CreatedApiKey) => void
  onSaved: (saved: ApiKey | undefined) => void
  onCancel: () => void
}

const FIELDS: (keyof NewApiKey & keyof ApiKey)[] = [
  'name',
  'rpmLimit',
  'tpmLimit',
  'concurrency',
  'dailyLimitNano',
  'monthlyLimitNano',
  'allowedModels',
  'guardrailId',
]

export function KeyForm(props: Props) {
  const start = props.apiKey
  // Only what the account's routing allows is offered; a key could reach nothing else.
  const routing = createOptional(() => getRouting())
  const [name, setName] = createSignal(start?.name ?? '')
  const [rpm, setRpm] = createSignal(asText(start?.rpmLimit))
  const [tpm, setTpm] = createSignal(asText(start?.tpmLimit))
  const [concurrency, setConcurrency] = createSignal(asText(start?.concurrency))
  const [daily, setDaily] = createSignal(start?.dailyLimitUsd ?? '')
  const [noDaily, setNoDaily] = createSignal(start ? start.dailyLimitNano === null : false)
  const [monthly, setMonthly] = createSignal(start?.monthlyLimitUsd ?? '')
  const [noMonthly, setNoMonthly] = createSignal(start ? start.monthlyLimitNano === null : false)
  const [models, setModels] = createSignal<string[]>(start?.allowedModels ?? [])
  const [guardrailId, setGuardrailId] = createSignal(start?.guardrailId ?? '')
  const submit = useSubmit()

  /** A cap: null without one; on a new key, undefined (the default) when empty. */
  const cap = (
    text: string,
    off: boolean,
    param: string,
    period: string,
  ): number | null | undefined => {
    if (off) return null
    const nano = readUsd(text, param)
    if (nano === 0)
      throw refuse(param, `Enter a ${period} cap above zero, or choose “No ${period} cap”.`)
    if (nano !== null) return nano
    if (!start) return undefined
    throw refuse(param, `Enter a ${period} cap in USD, or choose “No ${period} cap”.`)
  }

  const check = useFormCheck(
    (field): NewApiKey => ({
      name: name().trim(),
      rpmLimit: field(() => readWhole(rpm(), 'rpmLimit', KEY_LIMIT)),
      tpmLimit: field(() => readWhole(tpm(), 'tpmLimit', KEY_LIMIT)),
      concurrency: field(() => readWhole(concurrency(), 'concurrency', KEY_LIMIT)),
      dailyLimitNano: field(() => cap(daily(), noDaily(), 'dailyLimitNano', 'daily')),
      monthlyLimitNano: field(() => cap(monthly(), noMonthly(), 'monthlyLimitNano', 'monthly')),
      allowedModels: models().length > 0 ? models() : null,
      guardrailId: guardrailId() || null,
    }),
  )
  const error = (param: string) => check.error(param) ?? fieldError(submit.error(), param)

  const changes = (key: ApiKey, next: NewApiKey): ApiKeyChanges =>
    changedFields<NewApiKey>(
      Object.fromEntries(FIELDS.map((field) => [field, key[field]])) as NewApiKey,
      next,
    )

  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const next = check.take()
    if (!next) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    await submit.run(async () => {
      if (!start) {
        const body = Object.fromEntries(
          Object.entries(next).filter(
            ([, value]) => value !== undefined && value !== null && value !== '',
          ),
        )
        // Null caps mean "no cap" and must be sent; other nulls are the same as leaving the field out.
        if (next.dailyLimitNano === null) body.dailyLimitNano = null
        if (next.monthlyLimitNano === null) body.monthlyLimitNano = null
        props.onCreated(await api<CreatedApiKey>('POST', '/keys', body))
        return
      }
      const changed = changes(start, next)
      props.onSaved(
        Object.keys(changed).length === 0
          ? undefined
          : await api<ApiKey>('PATCH', `/keys/${start.id}`, changed),
      )
    })
    if (submit.error()) focusFirstInvalid(form)
  }

  const capHint = (period: 'daily' | 'monthly') => {
    const amount =
      period === 'daily' ? props.defaults?.dailyLimitUsd : props.defaults?.monthlyLimitUsd
    const span = period === 'daily' ? 'UTC day' : 'UTC month'
    if (start)
      return `Requests are refused for the rest of the ${span} once the key has spent this much.`
    if (amount === null) return `Empty: no ${period} cap, the default for new keys.`
    return amount === undefined
      ? `Empty: the default cap for new keys.`
      : `Empty: the default for new keys, ${usd(amount)} a ${period === 'daily' ? 'day' : 'month'}.`
  }
  const otherError = () => formError(submit.error(), FIELDS)
  /** A cap as it would be saved: typed, or on a new key left empty, the default; undefined for none. */
  const capNano = (text: string, off: boolean, fallback: number | null | undefined) => {
    if (off) return undefined
    if (text.trim() === '') return start ? undefined : (fallback ?? undefined)
    return usdToNano(text)
  }
  // Not a refusal (the server takes both, and both caps apply), but the daily cap could then never
  // apply: likely a slip, also against the default monthly cap a new key gets when the field is empty.
  const dailyAboveMonthly = () => {
    const day = capNano(daily(), noDaily(), props.defaults?.dailyLimitNano)
    const month = capNano(monthly(), noMonthly(), props.defaults?.monthlyLimitNano)
    return day !== undefined && month !== undefined && day > month
  }
  /** The warning's words, naming a cap that is the default because its field is empty. */
  const capsNote = () => {
    const isDefault = (text: string, off: boolean) => !start && !off && text.trim() === ''
    const day = isDefault(daily(), noDaily())
      ? `The default daily cap for new keys (${usd(props.defaults?.dailyLimitUsd)})`
      : 'The daily cap'
    const month = isDefault(monthly(), noMonthly())
      ? `the default monthly cap for new keys (${usd(props.defaults?.monthlyLimitUsd)})`
      : 'the monthly cap'
    return `${day} is above ${month}, so the monthly cap stops the key first. Lower the daily cap if it should apply.`
  }

  return (
    <form class="stack" onSubmit={save} novalidate>
      <TextField
        label={KEY_LABELS.name}
        value={name()}
        onValue={setName}
        maxlength={100}
        autocomplete="off"
        hint="A label for you, such as where the key is used."
        error={error('name')}
      />
      <fieldset class="form-group">
        <legend>Rate limits</legend>
        <p class="hint">
          Empty: no limit of this key. The account's own limits still apply. Tokens count input plus
          output, estimated.
        </p>
        <div class="row">
          <TextField
            label={LIMIT_LABELS.rpmLimit}
            inputmode="numeric"
            value={rpm()}
            onValue={setRpm}
            error={error('rpmLimit')}
          />
          <TextField
            label={LIMIT_LABELS.tpmLimit}
            inputmode="numeric"
            value={tpm()}
            onValue={setTpm}
            error={error('tpmLimit')}
          />
          <TextField
            label={LIMIT_LABELS.concurrency}
            inputmode="numeric"
            value={concurrency()}
            onValue={setConcurrency}
            error={error('concurrency')}
          />
        </div>
      </fieldset>
      <fieldset class="form-group">
        <legend>Spend caps</legend>
        <div class="row">
          <div class="stack">
            <TextField
              label={KEY_LABELS.dailyLimitNano}
              inputmode="decimal"
              placeholder={start ? undefined : (props.defaults?.dailyLimitUsd ?? undefined)}
              disabled={noDaily()}
              value={noDaily() ? '' : daily()}
              onValue={setDaily}
              hint={capHint('daily')}
              error={error('dailyLimitNano')}
            />
            <Checkbox label="No daily cap" checked={noDaily()} onChange={setNoDaily} />
          </div>
          <div class="stack">
            <TextField
              label={KEY_LABELS.monthlyLimitNano}
              inputmode="decimal"
              placeholder={start ? undefined : (props.defaults?.monthlyLimitUsd ?? undefined)}
              disabled={noMonthly()}
              value={noMonthly() ? '' : monthly()}
              onValue={setMonthly}
              hint={capHint('monthly')}
              error={error('monthlyLimitNano')}
            />
            <Checkbox label="No monthly cap" checked={noMonthly()} onChange={setNoMonthly} />
          </div>
        </div>
        <Show when={dailyAboveMonthly()}>
          <p class="hint" role="status">
            {capsNote()}
          </p>
        </Show>
      </fieldset>
      <ModelPicker
        choices="exact"
        label={KEY_LABELS.allowedModels}
        allowed={routing.latest()?.models}
        value={models()}
        onChange={setModels}
        emptyText="Every model the account may use"
        hint="None chosen: no restriction of this key. The account's routing and the key's guardrail can restrict models further."
        error={error('allowedModels')}
      />
      <SelectField
        label={KEY_LABELS.guardrailId}
        value={guardrailId()}
        onValue={setGuardrailId}
        options={[
          { value: '', label: 'None' },
          ...(props.guardrails ?? []).map((guardrail) => ({
            value: guardrail.id,
            label: guardrail.name,
          })),
        ]}
        hint={
          <>
            Content filters, models and a monthly budget shared by its keys.{' '}
            <A href="/dashboard/guardrails">Manage guardrails</A>
          </>
        }
        error={error('guardrailId')}
      />
      <Show when={otherError()}>
        <ErrorNotice error={otherError()} />
      </Show>
      <div class="dialog-actions">
        <Button variant="ghost" onClick={() => props.onCancel()}>
          Cancel
        </Button>
        <Button type="submit" variant="primary" busy={submit.busy()}>
          {start ? 'Save changes' : 'Create'}
        </Button>
      </div>
    </form>
  )
}
