/**
 * A page's filters kept in the address (`?status=error&from=…`), so a filtered view survives a refresh
 * and can be bookmarked or sent to a teammate. Empty values leave the address.
 */
import { useSearchParams } from '@solidjs/router'

export type UrlFilters<K extends string> = ReturnType<typeof useUrlFilters<K>>

export function useUrlFilters<K extends string>(names: readonly K[]) {
  const [params, setParams] = useSearchParams()
  const value = (name: K): string => {
    const raw = params[name]
    return (Array.isArray(raw) ? raw[0] : raw) ?? ''
  }
  return {
    value,
    /** Every filter's current value (reading it tracks them all). */
    values: (): Record<K, string> => Object.fromEntries(names.map((name) => [name, value(name)])) as Record<K, string>,
    active: () => names.some((name) => value(name) !== ''),
    apply: (next: Partial<Record<K, string>>) => setParams(Object.fromEntries(names.map((name) => [name, next[name] || null]))),
  }
}
