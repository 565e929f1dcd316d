/**
 * A page's filters kept in the address (`?status=error&from=…`), so a filtered view survives a refresh
 * and can be bookmarked or sent to a teammate. Empty values leave the address.
 */
import { useSearchParams, type SearchParams } from '@solidjs/router'

export type UrlFilters<K extends string> = ReturnType<typeof useUrlFilters<K>>

/**
 * Every filter's value in the address ('' when absent). A route's preload and its page both read the
 * filters this way, so they ask for the same query and the page gets the answer the preload started.
 */
export function filterValues<K extends string>(
  names: readonly K[],
  params: SearchParams,
): Record<K, string> {
  return Object.fromEntries(names.map((name) => [name, firstValue(params[name])])) as Record<
    K,
    string
  >
}

function firstValue(raw: string | string[] | undefined): string {
  return (Array.isArray(raw) ? raw[0] : raw) ?? ''
}

export function useUrlFilters<K extends string>(names: readonly K[]) {
  const [params, setParams] = useSearchParams()
  const value = (name: K): string => firstValue(params[name])
  return {
    value,
    /** Every filter's current value (reading it tracks them all). */
    values: (): Record<K, string> => filterValues(names, params),
    active: () => names.some((name) => value(name) !== ''),
    apply: (next: Partial<Record<K, string>>) =>
      setParams(Object.fromEntries(names.map((name) => [name, next[name] || null]))),
  }
}
