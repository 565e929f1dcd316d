/** Modal dialogs: a confirmation before what cannot be undone, and a dialog the caller opens for longer forms. */
import { createEffect, createSignal, createUniqueId, Show, type JSX } from 'solid-js'
import { Button, ErrorNotice, type ButtonProps } from './ui.tsx'

/** A button that asks before doing something that cannot be undone, in a modal dialog. */
export function ConfirmButton(props: {
  label: string
  title: string
  confirmLabel: string
  onConfirm: () => Promise<unknown>
  children: JSX.Element
  variant?: ButtonProps['variant']
  disabled?: boolean
  /** Why the button is disabled (its tooltip). */
  disabledTitle?: string
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
      <Button
        variant={props.variant ?? 'danger'}
        disabled={props.disabled}
        title={props.disabled ? props.disabledTitle : undefined}
        aria-label={props.ariaLabel}
        onClick={() => dialog?.showModal()}
      >
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
export function Dialog(props: {
  open: boolean
  title: string
  onClose: () => void
  children: JSX.Element
  wide?: boolean
}) {
  let dialog: HTMLDialogElement | undefined
  const titleId = createUniqueId()
  createEffect(() => {
    const open = props.open
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  })
  return (
    <dialog
      ref={dialog}
      class="dialog"
      classList={{ wide: !!props.wide }}
      aria-labelledby={titleId}
      onClose={() => props.onClose()}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  )
}
