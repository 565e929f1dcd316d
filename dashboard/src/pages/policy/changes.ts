/** What an edit form sends: only the fields whose value differs from the stored one (lists compared by content). */
export function changedFields<T extends object>(before: T, after: T): Partial<T> {
  const changed: Partial<T> = {}
  for (const field of Object.keys(after) as (keyof T)[]) {
    if (
      after[field] !== undefined &&
      JSON.stringify(after[field]) !== JSON.stringify(before[field])
    )
      changed[field] = after[field]
  }
  return changed
}
