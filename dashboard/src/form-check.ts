/**
 * Checking a form before it is sent: every field's problem at once, each under its field. A form's
 * reader reads each field through `field`; a field that breaks a rule the server's schema also has
 * (the numbers of shared/schemas/admin/field-rules.ts) is refused as the server would refuse it, an
 * ApiError naming the field, and the reader goes on to the next one. Nothing shows until the first
 * submit; from then on a field's problem goes away as soon as it is fixed.
 */
import { createMemo, createSignal } from 'solid-js'
import { EMAIL_RULE } from '../../shared/schemas/admin/field-rules.ts'
import { ApiError } from './api.ts'

/** A field refused by its name in the request (`param`), as the server refuses one. */
export const refuse = (param: string, message: string) =>
  new ApiError(400, 'invalid_request', message, param)

/** Reads one field: what `read` returns, or undefined when it refuses the field (the refusal is kept). */
export type ReadField = <T>(read: () => T) => T | undefined

type Checked<T> = { ok: true; value: T } | { ok: false; errors: ReadonlyMap<string, string> }

function check<T>(read: (field: ReadField) => T): Checked<T> {
  const errors = new Map<string, string>()
  const field: ReadField = (readOne) => {
    try {
      return readOne()
    } catch (error) {
      if (!(error instanceof ApiError) || !error.param) throw error
      if (!errors.has(error.param)) errors.set(error.param, error.message)
      return undefined
    }
  }
  const value = read(field)
  return errors.size === 0 ? { ok: true, value } : { ok: false, errors }
}

/** A form's own checks: `read` reads every field through `field` and builds what the form sends. */
export function useFormCheck<T>(read: (field: ReadField) => T): {
  /** The field's problem, once the form has been submitted. */
  error: (param: string) => string | undefined
  /** On submit: what to send, or undefined when a field is refused (each then shows its problem). */
  take: () => T | undefined
  /** After a form was sent and emptied: nothing shows again until the next submit. */
  reset: () => void
} {
  const [submitted, setSubmitted] = createSignal(false)
  const checked = createMemo(() => check(read))
  return {
    error(param) {
      const result = checked()
      return submitted() && !result.ok ? result.errors.get(param) : undefined
    },
    take() {
      setSubmitted(true)
      const result = checked()
      return result.ok ? result.value : undefined
    },
    reset: () => setSubmitted(false),
  }
}

const emailPattern = new RegExp(EMAIL_RULE.pattern)

/**
 * An e-mail address as the server takes it (EMAIL_RULE), without its surrounding spaces: a missing one is
 * refused under the field with `missing`, one that cannot be an address with an example of one.
 */
export function readEmail(text: string, param: string, missing: string): string {
  const address = text.trim()
  if (!address) throw refuse(param, missing)
  if (
    address.length < EMAIL_RULE.minLength ||
    address.length > EMAIL_RULE.maxLength ||
    !emailPattern.test(address)
  )
    throw refuse(param, 'Enter an e-mail address such as name@example.com.')
  return address
}

/** Moves focus to the form's first field marked invalid, so its problem is read out first. */
export function focusFirstInvalid(form: HTMLFormElement): void {
  form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus()
}
