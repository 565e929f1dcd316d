/**
 * A list the admin API gives in keyset pages (activity, the ledger). The first page is a query's answer:
 * read again for new filters and on Refresh like any query, and shown in its states by `Loaded`. Older
 * pages are appended by `more()` and belong to the first page they continue: when that page is read
 * again they are dropped, and an older page still on its way for an earlier one is dropped when it lands.
 */
import { createAsync, useIsRouting } from '@solidjs/router'
import { createSignal, Show, type JSX } from 'solid-js'
import { createRefresh } from './reading.ts'
import { Button, ErrorNotice, Loaded } from './ui.tsx'

export type KeysetPage<T> = { items: T[]; nextBefore: string | null }

/** The older pages appended to one first page, and why the last one failed. */
type Continuation<T> = { after: KeysetPage<T>; items: T[]; next: string | null; error?: unknown }

export function createKeysetList<T>(reads: {
  /** The first page, as a query (the route's preload may have started it). */
  first: () => Promise<KeysetPage<T>>
  /** An older page, after the cursor an earlier page gave. */
  older: (before: string) => Promise<KeysetPage<T>>
  /** The first page's query key, read again by Refresh. */
  key: string
}) {
  const first = createAsync(() => reads.first())
  const refresh = createRefresh(reads.key)
  const routing = useIsRouting()
  const [continuation, setContinuation] = createSignal<Continuation<T>>()
  /** The first page whose next page is on its way. */
  const [continuing, setContinuing] = createSignal<KeysetPage<T>>()

  /** The first page on screen; undefined while there is none (read for the first time, or failed). */
  const shown = (): KeysetPage<T> | undefined => {
    try {
      return first.latest
    } catch {
      return undefined
    }
  }
  const continued = (page: KeysetPage<T> | undefined) => {
    const older = continuation()
    return page && older?.after === page ? older : undefined
  }

  async function more(): Promise<void> {
    const page = shown()
    const known = continued(page)
    const before = known ? known.next : page?.nextBefore
    if (!page || !before) return
    setContinuing(page)
    try {
      const older = await reads.older(before)
      if (shown() === page)
        setContinuation({
          after: page,
          items: [...(known?.items ?? []), ...older.items],
          next: older.nextBefore,
        })
    } catch (error) {
      if (shown() === page)
        setContinuation({ after: page, items: known?.items ?? [], next: before, error })
    } finally {
      if (continuing() === page) setContinuing(undefined)
    }
  }

  return {
    /** The first page (a `createAsync` accessor: it suspends while read for the first time, throws when that failed). */
    first,
    /** Every row shown: the first page's, then the older pages'. */
    items: (): T[] => [...(first()?.items ?? []), ...(continued(first())?.items ?? [])],
    hasMore: () => {
      const page = first()
      const older = continued(page)
      const next = older ? older.next : page?.nextBefore
      return next !== null && next !== undefined
    },
    /** Why the last older page failed (Load more tries it again). */
    moreError: () => continued(first())?.error,
    loadingMore: () => continuing() !== undefined && continuing() === shown(),
    /** Reads the first page again; the rows on screen stay until it is in. */
    reload: refresh.run,
    /** Refresh, or new filters, are being read. */
    reloading: () => refresh.busy() || routing(),
    more,
  }
}

type KeysetList = ReturnType<typeof createKeysetList<unknown>>

/**
 * A keyset list's states: loading, failed (with retry), empty (`empty`), else the rows (`children`) and a
 * footer saying how many are shown, with "Load more" while older pages exist.
 */
export function KeysetView(props: {
  list: KeysetList
  loading: string
  empty: JSX.Element
  shown: (count: number) => string
  children: JSX.Element
}) {
  return (
    <Loaded data={props.list.first} retry={props.list.reload} loading={props.loading}>
      {() => (
        <>
          <Show when={props.list.moreError()}>
            <ErrorNotice error={props.list.moreError()} retry={() => void props.list.more()} />
          </Show>
          <Show when={props.list.items().length > 0} fallback={props.empty}>
            {props.children}
            <div class="row center">
              <Show
                when={props.list.hasMore()}
                fallback={
                  <span class="small muted">
                    {props.shown(props.list.items().length)}: that is all.
                  </span>
                }
              >
                <Button onClick={() => void props.list.more()} busy={props.list.loadingMore()}>
                  Load more
                </Button>
                <span class="small muted">{props.shown(props.list.items().length)}</span>
              </Show>
            </div>
          </Show>
        </>
      )}
    </Loaded>
  )
}
