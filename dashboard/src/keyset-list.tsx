/**
 * A list the admin API gives in keyset pages (activity, the ledger): the first page on load and on every
 * reload (new filters, Refresh), older pages appended by `more()`. A reload supersedes pages still on
 * their way, so a slow answer for old filters never lands over the new ones.
 */
import { createSignal, Show, type JSX } from 'solid-js'
import { Button, ErrorNotice, Loading } from './ui.tsx'

export type KeysetPage<T> = { items: T[]; nextBefore: string | null }

export function createKeysetList<T>(fetchPage: (before: string | undefined) => Promise<KeysetPage<T>>) {
  const [items, setItems] = createSignal<T[]>([])
  const [next, setNext] = createSignal<string | null>(null)
  const [loaded, setLoaded] = createSignal(false)
  const [busy, setBusy] = createSignal<'first' | 'more' | null>(null)
  const [error, setError] = createSignal<unknown>()
  let generation = 0
  let last: string | undefined

  async function load(before: string | undefined): Promise<void> {
    last = before
    const mine = before === undefined ? ++generation : generation
    setBusy(before === undefined ? 'first' : 'more')
    setError(undefined)
    try {
      const page = await fetchPage(before)
      if (mine !== generation) return
      setItems(before === undefined ? page.items : [...items(), ...page.items])
      setNext(page.nextBefore)
      setLoaded(true)
    } catch (failure) {
      if (mine === generation) setError(failure)
    } finally {
      if (mine === generation) setBusy(null)
    }
  }

  return {
    items,
    /** The first page has arrived (an empty list is then really empty). */
    loaded,
    reloading: () => busy() === 'first',
    loadingMore: () => busy() === 'more',
    hasMore: () => next() !== null,
    error,
    reload: () => load(undefined),
    /** Repeats the load that failed (the first page, or the next one). */
    retry: () => load(last),
    more: () => {
      const before = next()
      return before ? load(before) : Promise.resolve()
    },
  }
}

type KeysetList = ReturnType<typeof createKeysetList<unknown>>

/**
 * A keyset list's states: failed (with retry), loading, empty (`empty`), else the rows (`children`) and a
 * footer saying how many are shown, with "Load more" while older pages exist.
 */
export function KeysetView(props: { list: KeysetList; loading: string; empty: JSX.Element; shown: (count: number) => string; children: JSX.Element }) {
  return (
    <>
      <Show when={props.list.error()}>
        <ErrorNotice error={props.list.error()} retry={() => void props.list.retry()} />
      </Show>
      <Show when={props.list.loaded()} fallback={<Show when={!props.list.error()}><Loading label={props.loading} /></Show>}>
        <Show when={props.list.items().length > 0} fallback={props.empty}>
          {props.children}
          <div class="row center">
            <Show when={props.list.hasMore()} fallback={<span class="small muted">{props.shown(props.list.items().length)}: that is all.</span>}>
              <Button onClick={() => void props.list.more()} busy={props.list.loadingMore()}>
                Load more
              </Button>
              <span class="small muted">{props.shown(props.list.items().length)}</span>
            </Show>
          </div>
        </Show>
      </Show>
    </>
  )
}
