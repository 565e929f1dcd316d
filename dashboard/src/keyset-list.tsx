/**
 * A list the admin API gives in keyset pages (activity, the ledger): the first page on load and on every
 * reload (new filters, Refresh), older pages appended by `more()`. A reload supersedes pages still on
 * their way, so a slow answer for old filters never lands over the new ones.
 */
import { createSignal, Show } from 'solid-js'
import { Button } from './ui.tsx'

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

/** The list's footer: how many are shown, and "Load more" while older pages exist. */
export function LoadMore(props: { list: ReturnType<typeof createKeysetList<unknown>>; shown: (count: number) => string }) {
  return (
    <div class="row center">
      <Show when={props.list.hasMore()} fallback={<span class="small muted">{props.shown(props.list.items().length)}: that is all.</span>}>
        <Button onClick={() => void props.list.more()} busy={props.list.loadingMore()}>
          Load more
        </Button>
        <span class="small muted">{props.shown(props.list.items().length)}</span>
      </Show>
    </div>
  )
}
