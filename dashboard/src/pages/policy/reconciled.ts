/**
 * A resource's storage that keeps unchanged rows the same objects across refetches (reconciled by `id`),
 * so a row's open dialog or focused button survives the list being read again after a change.
 */
import type { Signal } from 'solid-js'
import { createStore, reconcile, unwrap } from 'solid-js/store'

export function reconciled<T>(initial: T | undefined): Signal<T | undefined> {
  const [store, setStore] = createStore<{ value: T | undefined }>({ value: initial })
  return [
    () => store.value,
    (next: unknown) => {
      const value = typeof next === 'function' ? (next as (previous: T | undefined) => T)(unwrap(store).value) : next
      setStore('value', reconcile(value as T))
      return store.value
    },
  ] as Signal<T | undefined>
}
