/**
 * The dashboard's building blocks: page frame, cards, buttons, error, loading and empty states, copy
 * buttons, secrets shown once, badges and a polite status region. Every async state (loading, failed,
 * empty) has its own visible form. Form controls are in forms.tsx, modal dialogs in dialogs.tsx.
 */
import type { AccessorWithLatest } from '@solidjs/router'
import {
  createEffect,
  createSignal,
  createUniqueId,
  ErrorBoundary,
  on,
  Show,
  splitProps,
  Suspense,
  type JSX,
} from 'solid-js'
import { ApiError } from './api.ts'
import { Field } from './forms.tsx'

export function Page(props: {
  title: string
  description?: JSX.Element
  actions?: JSX.Element
  children: JSX.Element
}) {
  // The browser's title names the page too: tabs, history and screen readers tell them apart.
  createEffect(() => {
    document.title = `${props.title} · Model Gateway`
  })
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

export function Card(props: {
  title?: string
  children: JSX.Element
  actions?: JSX.Element
  class?: string
  /** The title's heading, which can then take the focus (to bring the card to the reader). */
  headingRef?: (heading: HTMLHeadingElement) => void
}) {
  const id = createUniqueId()
  return (
    <section class={`card ${props.class ?? ''}`} aria-labelledby={props.title ? id : undefined}>
      <Show when={props.title || props.actions}>
        <header class="card-header">
          <Show when={props.title}>
            <h2 id={id} ref={props.headingRef} tabindex={props.headingRef ? -1 : undefined}>
              {props.title}
            </h2>
          </Show>
          {props.actions}
        </header>
      </Show>
      {props.children}
    </section>
  )
}

export type ButtonProps = JSX.ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost'
  busy?: boolean
}

export function Button(props: ButtonProps) {
  const [own, rest] = splitProps(props, [
    'variant',
    'busy',
    'class',
    'children',
    'disabled',
    'type',
    'onClick',
  ])
  // A busy button keeps the focus (a disabled one would drop it to the start of the page, so a keyboard
  // user pressing Refresh or Load more would start over) and ignores presses, a form's Enter included.
  const click = (event: MouseEvent & { currentTarget: HTMLButtonElement; target: Element }) => {
    if (own.busy) return event.preventDefault()
    const handler = own.onClick
    if (typeof handler === 'function') handler(event)
    else if (handler) handler[0](handler[1], event)
  }
  return (
    <button
      type={own.type ?? 'button'}
      class={`button ${own.variant ?? 'secondary'} ${own.class ?? ''}`}
      disabled={own.disabled}
      aria-disabled={own.busy ? 'true' : undefined}
      aria-busy={own.busy ? 'true' : undefined}
      onClick={click}
      {...rest}
    >
      <Show when={own.busy}>
        <span class="spinner" aria-hidden="true" />
      </Show>
      {own.children}
    </button>
  )
}

/** A refusal in words: the error table's title and the server's message. */
/** A card's Refresh: reads its queries again, busy meanwhile. */
export function RefreshButton(props: {
  refresh: { run: () => Promise<void>; busy: () => boolean }
}) {
  return (
    <Button variant="ghost" onClick={() => void props.refresh.run()} busy={props.refresh.busy()}>
      Refresh
    </Button>
  )
}

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

export function Notice(props: {
  tone?: 'info' | 'warning' | 'success'
  title?: string
  children: JSX.Element
}) {
  return (
    <div
      class={`notice ${props.tone ?? 'info'}`}
      role={props.tone === 'warning' ? 'alert' : 'status'}
    >
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

/**
 * A card's data in its three states: loading (the first read only), failed (with Try again) and loaded.
 * `data` is a `createAsync` accessor: it suspends while its first answer is on its way and throws when
 * the read failed. A read again (`revalidate`, new filters in the address) happens in a transition, so
 * the answer on screen stays until the new one is in; after a failure the error stays until then.
 */
export function Loaded<T>(props: {
  data: AccessorWithLatest<T | undefined>
  retry: () => Promise<unknown>
  loading?: string
  children: (value: T) => JSX.Element
}) {
  const answered = () => {
    try {
      return props.data.latest !== undefined
    } catch {
      return false
    }
  }
  return (
    <ErrorBoundary
      fallback={(error, reset) => {
        // Whatever read it again (Try again, Refresh, new filters), a new answer takes the error's place.
        createEffect(on(answered, (ok) => ok && reset(), { defer: true }))
        return <ErrorNotice error={error} retry={() => void props.retry()} />
      }}
    >
      <Suspense fallback={<Loading label={props.loading} />}>
        <Show when={props.data()} keyed>
          {(value) => props.children(value)}
        </Show>
      </Suspense>
    </ErrorBoundary>
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
    <div
      class="toast"
      role="status"
      aria-live="polite"
      classList={{ visible: announcement() !== '' }}
    >
      {announcement()}
    </div>
  )
}

export function CopyButton(props: {
  text: string
  label: string
  variant?: ButtonProps['variant']
  /** Whether the text may be copied: false leaves the clipboard alone (the page then shows why). */
  check?: () => boolean
}) {
  const [copied, setCopied] = createSignal(false)
  const copy = async () => {
    if (props.check && !props.check()) return
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
export function SecretValue(props: { label: string; value: string; hint?: JSX.Element }) {
  return (
    <Field label={props.label} hint={props.hint} class="secret">
      {(id, describedBy) => (
        <div class="secret-row">
          <input
            id={id}
            class="mono"
            readonly
            aria-describedby={describedBy()}
            value={props.value}
            onFocus={(event) => event.currentTarget.select()}
          />
          <CopyButton
            text={props.value}
            label={`Copy ${inSentence(props.label)}`}
            variant="primary"
          />
        </div>
      )}
    </Field>
  )
}

/** "Dashboard link" → "dashboard link" inside a sentence; an acronym ("API key") stays as written. */
function inSentence(label: string): string {
  return label.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase())
}

export function Badge(props: {
  tone?: 'good' | 'warn' | 'bad' | 'neutral'
  children: JSX.Element
}) {
  return <span class={`badge ${props.tone ?? 'neutral'}`}>{props.children}</span>
}
