/**
 * Form pieces: every control with its label, hint and error wired by id (aria-describedby), and a
 * submission's pending and failed states. A refusal that names a field shows under that field.
 */
import {
  createSignal,
  createUniqueId,
  For,
  Show,
  splitProps,
  untrack,
  type Accessor,
  type JSX,
} from 'solid-js'
import { ApiError } from './api.ts'
import { isoFromLocalInput, localZoneName } from './time-inputs.ts'

type FieldProps = {
  label: string
  hint?: JSX.Element
  /** A passing note under the hint, such as why the control's options are missing. */
  status?: JSX.Element
  error?: string | null
  /** Classes beside `field`. */
  class?: string
  /** The control, made once: its `aria-describedby` follows `describedBy()` as a hint or error comes and goes. */
  children: (id: string, describedBy: Accessor<string | undefined>) => JSX.Element
}

/** A label, the control (given its id), a hint, a status note and an error, wired with aria-describedby. */
export function Field(props: FieldProps) {
  const id = createUniqueId()
  const described = () =>
    [
      props.hint ? `${id}-hint` : '',
      props.error ? `${id}-error` : '',
      props.status ? `${id}-status` : '',
    ]
      .filter(Boolean)
      .join(' ') || undefined
  return (
    <div
      class={props.class ? `field ${props.class}` : 'field'}
      classList={{ invalid: !!props.error }}
    >
      <label for={id}>{props.label}</label>
      {untrack(() => props.children(id, described))}
      <Show when={props.hint}>
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      </Show>
      <Show when={props.status}>
        <p class="hint" id={`${id}-status`}>
          {props.status}
        </p>
      </Show>
      <Show when={props.error}>
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      </Show>
    </div>
  )
}

type TextFieldProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'onInput' | 'value'> & {
  label: string
  hint?: JSX.Element
  error?: string | null
  value: string
  onValue: (value: string) => void
}

export function TextField(props: TextFieldProps) {
  const [own, rest] = splitProps(props, ['label', 'hint', 'error', 'value', 'onValue'])
  return (
    <Field label={own.label} hint={own.hint} error={own.error}>
      {(id, describedBy) => (
        <input
          id={id}
          aria-describedby={describedBy()}
          aria-invalid={own.error ? 'true' : undefined}
          value={own.value}
          onInput={(event) => own.onValue(event.currentTarget.value)}
          {...rest}
        />
      )}
    </Field>
  )
}

export function SelectField(props: {
  label: string
  hint?: JSX.Element
  error?: string | null
  value: string
  onValue: (value: string) => void
  options: readonly { value: string; label: string }[]
  name?: string
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {(id, describedBy) => (
        <select
          id={id}
          name={props.name}
          aria-describedby={describedBy()}
          aria-invalid={props.error ? 'true' : undefined}
          value={props.value}
          onChange={(event) => props.onValue(event.currentTarget.value)}
        >
          <For each={props.options}>
            {(option) => <option value={option.value}>{option.label}</option>}
          </For>
        </select>
      )}
    </Field>
  )
}

export function Checkbox(props: {
  label: string
  checked: boolean
  onChange: (checked: boolean) => void
  hint?: string
  disabled?: boolean
}) {
  const id = createUniqueId()
  return (
    <div class="checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      <label for={id}>
        {props.label}
        <Show when={props.hint}>
          <span class="hint"> {props.hint}</span>
        </Show>
      </label>
    </div>
  )
}

/** A form submission's pending and failed states. */
export function useSubmit(): {
  busy: Accessor<boolean>
  error: Accessor<unknown>
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>
  clear: () => void
} {
  const [busy, setBusy] = createSignal(false)
  const [error, setError] = createSignal<unknown>()
  return {
    busy,
    error,
    clear: () => setError(undefined),
    async run(action) {
      setBusy(true)
      setError(undefined)
      try {
        return await action()
      } catch (failure) {
        setError(failure)
        return undefined
      } finally {
        setBusy(false)
      }
    },
  }
}

/** The error of a field, when the refusal names it or one of its items (`fallbacks[1]`). */
export function fieldError(error: unknown, param: string): string | null {
  if (!(error instanceof ApiError) || !error.param) return null
  return error.param === param || error.param.startsWith(`${param}[`) ? error.message : null
}

/** A refusal that names none of the form's fields: shown once, above its buttons. */
export function formError(error: unknown, params: readonly string[]): unknown {
  return params.some((param) => fieldError(error, param)) ? undefined : error
}

/**
 * A From/To pair of local date-times, each labelled with the browser's time zone it is read in. `error`
 * shows under To: the range's problem (see `timeRangeProblem`).
 */
export function LocalTimeRange(props: {
  from: string
  to: string
  onFrom: (value: string) => void
  onTo: (value: string) => void
  error?: string
}) {
  return (
    <>
      <TextField
        label={`From (${localZoneName()})`}
        type="datetime-local"
        value={props.from}
        onValue={props.onFrom}
      />
      <TextField
        label={`To (${localZoneName()})`}
        type="datetime-local"
        value={props.to}
        onValue={props.onTo}
        error={props.error}
      />
    </>
  )
}

/** What is wrong with a From/To pair (the admin API refuses a range that does not end after it starts). */
export function timeRangeProblem(from: string, to: string): string | undefined {
  const start = Date.parse(isoFromLocalInput(from))
  const end = Date.parse(isoFromLocalInput(to))
  return start >= end ? 'Choose a time after From, or leave To empty.' : undefined
}

/**
 * A filter form's time range, checked on Apply: nothing shows until then; from then on the problem goes
 * away as soon as the range is fixed. `take` answers whether the range may be applied (focusing To if not).
 */
export function useTimeRangeCheck(from: Accessor<string>, to: Accessor<string>) {
  const [applied, setApplied] = createSignal(false)
  const error = () => (applied() ? timeRangeProblem(from(), to()) : undefined)
  return {
    error,
    take(form: HTMLFormElement): boolean {
      setApplied(true)
      if (!timeRangeProblem(from(), to())) return true
      queueMicrotask(() => form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus())
      return false
    },
  }
}
