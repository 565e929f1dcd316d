/**
 * Reading queries beside a card's own data (which `Loaded` in ui.tsx shows): a Refresh that stays busy
 * until the new answer is on screen, and a read that part of a page can do without (names, option lists,
 * a balance line), which never holds the page in its loading state and never throws into it.
 */
import { createAsync, createAsyncStore, revalidate } from '@solidjs/router'
import { createMemo, createSignal } from 'solid-js'
import type { ReconcileOptions } from 'solid-js/store'

/**
 * Reads the queries under `key` again. `revalidate` replaces an answer in a transition, which lasts until
 * the new answers read inside a `Loaded` are in: the old ones stay on screen, and `busy` says so.
 */
export function createRefresh(key: string | string[]) {
  const [busy, setBusy] = createSignal(false)
  return {
    busy,
    run: async () => {
      setBusy(true)
      try {
        await revalidate(key)
      } finally {
        setBusy(false)
      }
    },
  }
}

export type Optional<T> = {
  /** The last answer; undefined until one is in, and after a failure. */
  latest: () => T | undefined
  /** Why the last read failed. */
  error: () => unknown
  /** Nothing has been answered yet. */
  loading: () => boolean
}

/**
 * A read part of a page can do without. `reconcile` keeps unchanged rows the same objects when the
 * answer is read again (see `createAsyncStore`).
 */
export function createOptional<T>(
  read: () => Promise<T>,
  options: { reconcile?: ReconcileOptions } = {},
): Optional<T> {
  // With a starting value `.latest` answers at once instead of suspending the page; a failure it still
  // throws is caught here and kept apart.
  const data = options.reconcile
    ? createAsyncStore<T | undefined>(() => read(), {
        initialValue: undefined,
        reconcile: options.reconcile,
      })
    : createAsync<T | undefined>(() => read(), { initialValue: undefined })
  const settled = createMemo((): { value?: T; error?: unknown } => {
    try {
      return { value: data.latest }
    } catch (error) {
      return { error }
    }
  })
  return {
    latest: () => settled().value,
    error: () => settled().error,
    loading: () => settled().value === undefined && settled().error === undefined,
  }
}
