/**
 * Choosing IDs from a long list: a labelled combobox that filters as you type, with the chosen IDs as
 * removable chips (the WAI-ARIA combobox pattern: typing, a click or Down opens the list with no option
 * highlighted, the first Down highlights the first option and arrows move from there, Enter picks the
 * highlighted option (or, with none highlighted, the first match of the typed text), Escape closes,
 * Backspace on an empty field removes the last chip), inside the shared
 * `Field` (label, hint, status note and error). ModelPicker feeds it the public catalog (`GET
 * /api/v1/models`, read once per page load); every page that sets allowed models, fallbacks or providers
 * uses these.
 */
import { revalidate } from '@solidjs/router'
import { createMemo, createSignal, For, Show, type JSX } from 'solid-js'
import { canChat, getCatalog, routedEntries, type CatalogEntry } from './data.ts'
import { Field } from './forms.tsx'
import { createOptional } from './reading.ts'

export type PickerOption = { id: string; label?: string; detail?: string }

type MultiSelectProps = {
  label: string
  hint?: JSX.Element
  error?: string | null
  options: readonly PickerOption[]
  value: readonly string[]
  onChange: (ids: string[]) => void
  /** At most this many; 1 makes a single choice (picking replaces it). */
  max?: number
  disabled?: boolean
  /** Shown instead of chips when nothing is chosen, e.g. "Any model". */
  emptyText?: string
  /** Lets a typed ID that is not listed be chosen (the server checks it). */
  allowOther?: (text: string) => boolean
  placeholder?: string
  /** A note under the field while the options load or after they failed. */
  status?: JSX.Element
}

const SHOWN = 200

export function MultiSelect(props: MultiSelectProps) {
  return (
    <Field
      label={props.label}
      hint={props.hint}
      status={props.status}
      error={props.error}
      class="picker"
    >
      {(id, describedBy) => <Combobox {...props} id={id} describedBy={describedBy()} />}
    </Field>
  )
}

/** The chosen chips, the text field and its list of options; `id` is the field's, from the label. */
function Combobox(props: MultiSelectProps & { id: string; describedBy: string | undefined }) {
  const [text, setText] = createSignal('')
  const [open, setOpen] = createSignal(false)
  // The option the user highlighted (arrows or the mouse); -1 while none is.
  const [active, setActive] = createSignal(-1)
  let input: HTMLInputElement | undefined

  const chosen = () => new Set(props.value)
  const full = () => props.max !== undefined && props.max > 1 && props.value.length >= props.max
  const matches = createMemo(() => {
    const terms = text().toLowerCase().split(/\s+/).filter(Boolean)
    const hits = props.options.filter((option) => {
      const haystack = `${option.id} ${option.label ?? ''}`.toLowerCase()
      return terms.every((term) => haystack.includes(term))
    })
    const typed = text().trim()
    const other: PickerOption[] =
      typed && props.allowOther?.(typed) && !props.options.some((option) => option.id === typed)
        ? [{ id: typed, detail: 'not in the list: the server checks it' }]
        : []
    // A typed ID comes after the listed matches: Enter picks the first match, as people expect.
    return [...hits.slice(0, SHOWN), ...other]
  })
  const optionId = (index: number) => `${props.id}-option-${index}`
  const activeOption = () => (active() >= 0 ? matches()[active()] : undefined)
  // What Enter picks: the highlighted option, else the first match of what was typed.
  const enterOption = () => activeOption() ?? (text().trim() ? matches()[0] : undefined)

  const toggle = (option: PickerOption) => {
    if (chosen().has(option.id)) props.onChange(props.value.filter((value) => value !== option.id))
    else if (props.max === 1) props.onChange([option.id])
    else if (!full()) props.onChange([...props.value, option.id])
    setText('')
    setActive(-1)
    if (props.max === 1) setOpen(false)
  }
  const remove = (value: string) => {
    props.onChange(props.value.filter((entry) => entry !== value))
    input?.focus()
  }
  const move = (step: number) => {
    if (!open()) setOpen(true)
    const count = matches().length
    // From no highlight, Down goes to the first option and Up to the last.
    if (count > 0)
      setActive((index) =>
        index < 0 ? (step > 0 ? 0 : count - 1) : (index + step + count) % count,
      )
    document.getElementById(optionId(active()))?.scrollIntoView({ block: 'nearest' })
  }
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault()
      move(1)
    } else if (event.key === 'ArrowUp') {
      event.preventDefault()
      move(-1)
    } else if (event.key === 'Enter' && open() && enterOption()) {
      // Picks the option instead of submitting the form around the picker.
      event.preventDefault()
      toggle(enterOption()!)
    } else if (event.key === 'Escape' && open()) {
      // Closes the list, not the dialog the picker may sit in.
      event.preventDefault()
      event.stopPropagation()
      setOpen(false)
      setActive(-1)
    } else if (event.key === 'Backspace' && text() === '' && props.value.length > 0) {
      props.onChange(props.value.slice(0, -1))
    }
  }
  const labelOf = (value: string) => props.options.find((option) => option.id === value)?.label

  return (
    <>
      <ul class="chips" aria-label={`${props.label}: chosen`}>
        <For
          each={props.value}
          fallback={<li class="muted small">{props.emptyText ?? 'None chosen'}</li>}
        >
          {(value) => (
            <li class="chip" title={labelOf(value)}>
              <span class="mono">{value}</span>
              <Show when={!props.disabled}>
                <button
                  type="button"
                  class="chip-remove"
                  aria-label={`Remove ${value}`}
                  onClick={() => remove(value)}
                >
                  ×
                </button>
              </Show>
            </li>
          )}
        </For>
      </ul>
      <div class="picker-box">
        <input
          ref={input}
          id={props.id}
          type="text"
          role="combobox"
          autocomplete="off"
          spellcheck={false}
          aria-autocomplete="list"
          aria-expanded={open()}
          aria-controls={`${props.id}-list`}
          aria-activedescendant={open() && activeOption() ? optionId(active()) : undefined}
          aria-describedby={props.describedBy}
          aria-invalid={props.error ? 'true' : undefined}
          disabled={props.disabled}
          placeholder={
            props.disabled
              ? 'Read only'
              : full()
                ? `At most ${props.max}: remove one to add another`
                : (props.placeholder ?? 'Search…')
          }
          value={text()}
          onInput={(event) => {
            setText(event.currentTarget.value)
            setActive(-1)
            setOpen(true)
          }}
          onClick={() => setOpen(true)}
          onBlur={() => {
            setOpen(false)
            setActive(-1)
          }}
          onKeyDown={onKeyDown}
        />
        <ul
          id={`${props.id}-list`}
          role="listbox"
          class="picker-list"
          aria-label={props.label}
          aria-multiselectable={props.max !== 1}
          hidden={!open()}
        >
          <For each={matches()} fallback={<li class="picker-empty">No match</li>}>
            {(option, index) => (
              <li
                id={optionId(index())}
                role="option"
                aria-selected={chosen().has(option.id)}
                aria-disabled={full() && !chosen().has(option.id) ? 'true' : undefined}
                classList={{ active: index() === active() }}
                // mousedown, not click: the field keeps its focus, so the list stays open for the next pick.
                onMouseDown={(event) => {
                  event.preventDefault()
                  toggle(option)
                }}
                onMouseMove={() => setActive(index())}
              >
                <span class="picker-check" aria-hidden="true">
                  {chosen().has(option.id) ? '✓' : ''}
                </span>
                <span class="mono">{option.id}</span>
                <Show when={option.label || option.detail}>
                  <span class="muted small">
                    {[option.label, option.detail].filter(Boolean).join(' · ')}
                  </span>
                </Show>
              </li>
            )}
          </For>
        </ul>
      </div>
    </>
  )
}

/** `author/model` or `service/auto…`: worth sending to the server to check. */
const modelShaped = (text: string) => /^[^\s/]+\/\S+$/.test(text)

function describe(entry: CatalogEntry): string {
  if (entry.auto_candidates)
    return `automatic choice of ${entry.auto_candidates.length}${entry.free ? ', free' : ''}`
  const parts = [entry.display_name && entry.display_name !== entry.id ? entry.display_name : '']
  if (!canChat(entry)) parts.push('image model')
  if (entry.alias_of) parts.push(`alias of ${entry.alias_of}`)
  if (entry.free) parts.push('free')
  return parts.filter(Boolean).join(', ')
}

/**
 * Models to choose from: `exact` lists only exact model IDs, image models included (what allowed-model
 * lists take), `any` also aliases and automatic choices but no image model (what a preset's model and
 * fallbacks may be: a preset is called for chat). `allowed` (exact model IDs) leaves out what leads to
 * none of them, such as the models the account's routing forbids.
 */
export function ModelPicker(
  props: Omit<MultiSelectProps, 'options' | 'allowOther' | 'status'> & {
    choices: 'exact' | 'any'
    allowed?: readonly string[] | null
  },
) {
  const catalog = createOptional(() => getCatalog())
  // From "try again" until its answer is in: the note says the list is loading again.
  const [retrying, setRetrying] = createSignal(false)
  const retry = async () => {
    setRetrying(true)
    void revalidate(getCatalog.key)
    // The catalog is read once and shared, so this is the answer the picker is about to show.
    await getCatalog().catch(() => undefined)
    setRetrying(false)
  }
  const options = createMemo<PickerOption[]>(() => {
    return routedEntries(catalog.latest() ?? [], props.allowed)
      .filter((entry) =>
        props.choices === 'any' ? canChat(entry) : !entry.alias_of && !entry.auto_candidates,
      )
      .map((entry) => ({ id: entry.id, label: describe(entry) || undefined }))
  })
  const status = () => {
    if (catalog.loading() || retrying()) return 'Loading the model list…'
    const error = catalog.error()
    if (error) {
      return (
        <>
          The model list could not be loaded (
          {error instanceof Error ? error.message : 'unknown error'}); type exact model IDs, or{' '}
          <button type="button" class="link-button" onClick={() => void retry()}>
            try again
          </button>
          .
        </>
      )
    }
    return undefined
  }
  return (
    <MultiSelect
      {...props}
      options={options()}
      allowOther={modelShaped}
      status={props.disabled ? undefined : status()}
      placeholder={props.placeholder ?? 'Search models…'}
    />
  )
}
