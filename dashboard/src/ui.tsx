/**
 * The dashboard's building blocks: page frame, buttons, labelled fields, error and empty states,
 * copy buttons, confirmation dialogs and a polite status region. Every control carries a label; every
 * async state (loading, failed, empty) has its own visible form.
 */
import { createEffect, createSignal, createUniqueId, For, Show, splitProps, type Accessor, type JSX, type Resource } from 'solid-js'
import { ApiError } from './api.ts'

export function Page(props: { title: string; description?: JSX.Element; actions?: JSX.Element; children: JSX.Element }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <div>
          <h1 id="page-title">{props.title}</h1>
          <Show when={props.description}>
            <p class="page-description">{props.description}</p>
          </Show>
        </div>
        <Show when={props.actions}>
          <div class="page-actions">{props.actions}</div>
        </Show>
      </header>
      {props.children}
    </section>
  )
}

export function Card(props: { title?: string; children: JSX.Element; actions?: JSX.Element; class?: string }) {
  const id = createUniqueId()
  return (
    <section class={`card ${props.class ?? ''}`} aria-labelledby={props.title ? id : undefined}>
      <Show when={props.title || props.actions}>
        <header class="card-header">
          <Show when={props.title}>
            <h2 id={id}>{props.title}</h2>
          </Show>
          {props.actions}
        </header>
      </Show>
      {props.children}
    </section>
  )
}

type ButtonProps = JSX.ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger' | 'ghost'; busy?: boolean }

export function Button(props: ButtonProps) {
  const [own, rest] = splitProps(props, ['variant', 'busy', 'class', 'children', 'disabled', 'type'])
  return (
    <button
      type={own.type ?? 'button'}
      class={`button ${own.variant ?? 'secondary'} ${own.class ?? ''}`}
      disabled={own.disabled || own.busy}
      aria-busy={own.busy ? 'true' : undefined}
      {...rest}
    >
      <Show when={own.busy}>
        <span class="spinner" aria-hidden="true" />
      </Show>
      {own.children}
    </button>
  )
}

type FieldProps = {
  label: string
  hint?: JSX.Element
  error?: string | null
  children: (id: string, describedBy: string | undefined) => JSX.Element
}

/** A label, the control (given its id), a hint and an error, wired with aria-describedby. */
export function Field(props: FieldProps) {
  const id = createUniqueId()
  const described = () => [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
  return (
    <div class="field" classList={{ invalid: !!props.error }}>
      <label for={id}>{props.label}</label>
      {props.children(id, described())}
      <Show when={props.hint}>
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
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
          aria-describedby={describedBy}
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
  value: string
  onValue: (value: string) => void
  options: readonly { value: string; label: string }[]
  name?: string
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id, describedBy) => (
        <select id={id} name={props.name} aria-describedby={describedBy} value={props.value} onChange={(event) => props.onValue(event.currentTarget.value)}>
          <For each={props.options}>{(option) => <option value={option.value}>{option.label}</option>}</For>
        </select>
      )}
    </Field>
  )
}

export function Checkbox(props: { label: string; checked: boolean; onChange: (checked: boolean) => void; hint?: string; disabled?: boolean }) {
  const id = createUniqueId()
  return (
    <div class="checkbox">
      <input id={id} type="checkbox" checked={props.checked} disabled={props.disabled} onChange={(event) => props.onChange(event.currentTarget.checked)} />
      <label for={id}>
        {props.label}
        <Show when={props.hint}>
          <span class="hint"> {props.hint}</span>
        </Show>
      </label>
    </div>
  )
}

/** A refusal in words: the error table's title and the server's message. */
export function ErrorNotice(props: { error: unknown; retry?: () => void }) {
  const title = () => (props.error instanceof ApiError ? props.error.title : 'Something went wrong')
  const message = () => (props.error instanceof Error ? props.error.message : String(props.error))
  return (
    <div class="notice error" role="alert">
      <strong>{title()}</strong>
      <p>{message()}</p>
      <Show when={props.retry}>
        <Button variant="ghost" onClick={() => props.retry!()}>
          Try again
        </Button>
      </Show>
    </div>
  )
}

export function Notice(props: { tone?: 'info' | 'warning' | 'success'; title?: string; children: JSX.Element }) {
  return (
    <div class={`notice ${props.tone ?? 'info'}`} role={props.tone === 'warning' ? 'alert' : 'status'}>
      <Show when={props.title}>
        <strong>{props.title}</strong>
      </Show>
      <div>{props.children}</div>
    </div>
  )
}

export function Loading(props: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
    </div>
  )
}

export function Empty(props: { title: string; children?: JSX.Element }) {
  return (
    <div class="empty">
      <strong>{props.title}</strong>
      <Show when={props.children}>
        <div>{props.children}</div>
      </Show>
    </div>
  )
}

/** A resource's three states: loading, failed (with retry), loaded. */
export function Loaded<T>(props: { data: Resource<T>; retry?: () => void; children: (value: T) => JSX.Element }) {
  return (
    <Show when={!props.data.error} fallback={<ErrorNotice error={props.data.error} retry={props.retry} />}>
      <Show when={props.data.latest !== undefined} fallback={<Loading />}>
        {props.children(props.data.latest as T)}
      </Show>
    </Show>
  )
}

const [announcement, setAnnouncement] = createSignal('')
let clearTimer: ReturnType<typeof setTimeout> | undefined

/** Says something briefly in the status region (screen readers hear it; sighted users see a toast). */
export function announce(text: string): void {
  setAnnouncement(text)
  clearTimeout(clearTimer)
  clearTimer = setTimeout(() => setAnnouncement(''), 3000)
}

export function Announcer() {
  return (
    <div class="toast" role="status" aria-live="polite" classList={{ visible: announcement() !== '' }}>
      {announcement()}
    </div>
  )
}

export function CopyButton(props: { text: string; label: string; variant?: ButtonProps['variant'] }) {
  const [copied, setCopied] = createSignal(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text)
    } catch {
      // Clipboard access can be refused (insecure origin, permissions): select-and-copy still works.
      announce('Copy failed: select the text and copy it by hand.')
      return
    }
    setCopied(true)
    announce('Copied to the clipboard.')
    setTimeout(() => setCopied(false), 1500)
  }
  return (
    <Button variant={props.variant ?? 'secondary'} onClick={copy} aria-label={props.label}>
      {copied() ? 'Copied' : 'Copy'}
    </Button>
  )
}

/** A secret shown once: monospace, selectable, with a copy button. */
export function SecretValue(props: { label: string; value: string }) {
  const id = createUniqueId()
  return (
    <div class="secret">
      <label for={id}>{props.label}</label>
      <div class="secret-row">
        <input id={id} class="mono" readonly value={props.value} onFocus={(event) => event.currentTarget.select()} />
        <CopyButton text={props.value} label={`Copy ${props.label.toLowerCase()}`} variant="primary" />
      </div>
    </div>
  )
}

/** A button that asks before doing something that cannot be undone, in a modal dialog. */
export function ConfirmButton(props: {
  label: string
  title: string
  confirmLabel: string
  onConfirm: () => Promise<unknown>
  children: JSX.Element
  variant?: ButtonProps['variant']
  disabled?: boolean
  ariaLabel?: string
}) {
  let dialog: HTMLDialogElement | undefined
  const [busy, setBusy] = createSignal(false)
  const [error, setError] = createSignal<unknown>()
  const titleId = createUniqueId()
  const confirm = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await props.onConfirm()
      dialog?.close()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <Button variant={props.variant ?? 'danger'} disabled={props.disabled} aria-label={props.ariaLabel} onClick={() => dialog?.showModal()}>
        {props.label}
      </Button>
      <dialog ref={dialog} class="dialog" aria-labelledby={titleId}>
        <h2 id={titleId}>{props.title}</h2>
        <div class="dialog-body">{props.children}</div>
        <Show when={error()}>
          <ErrorNotice error={error()} />
        </Show>
        <div class="dialog-actions">
          <Button variant="ghost" onClick={() => dialog?.close()}>
            Cancel
          </Button>
          <Button variant={props.variant ?? 'danger'} busy={busy()} onClick={confirm}>
            {props.confirmLabel}
          </Button>
        </div>
      </dialog>
    </>
  )
}

/** A modal dialog opened by the caller (forms that do not fit in a row). */
export function Dialog(props: { open: boolean; title: string; onClose: () => void; children: JSX.Element; wide?: boolean }) {
  let dialog: HTMLDialogElement | undefined
  const titleId = createUniqueId()
  createEffect(() => {
    const open = props.open
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  })
  return (
    <dialog ref={dialog} class="dialog" classList={{ wide: !!props.wide }} aria-labelledby={titleId} onClose={() => props.onClose()}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  )
}

/** A form submission's pending and failed states. */
export function useSubmit(): { busy: Accessor<boolean>; error: Accessor<unknown>; run: <T>(action: () => Promise<T>) => Promise<T | undefined>; clear: () => void } {
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

/** The error of a field, when the refusal names it. */
export function fieldError(error: unknown, param: string): string | null {
  return error instanceof ApiError && error.param === param ? error.message : null
}

export function Badge(props: { tone?: 'good' | 'warn' | 'bad' | 'neutral'; children: JSX.Element }) {
  return <span class={`badge ${props.tone ?? 'neutral'}`}>{props.children}</span>
}
