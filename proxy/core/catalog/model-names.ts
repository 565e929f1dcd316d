/**
 * Help for a model named without its author ("gpt-4o-mini", "auto"): the full IDs it may have meant, and
 * the sentence that suggests them, the same wherever a model is looked up.
 */

/** The known IDs whose part after the author is `id`; none when `id` has an author of its own. */
export function bareNameMatches(id: string, known: Iterable<string>): string[] {
  if (id.includes('/')) return []
  return [...known].filter((full) => full.slice(full.indexOf('/') + 1) === id)
}

/** The sentence appended to an unknown model's refusal; empty when the name had an author. */
export function fullIdHint(id: string, matches: string[]): string {
  if (id.includes('/')) return ''
  return matches.length > 0
    ? ` Model IDs have the form <author>/<model>; did you mean ${matches.join(' or ')}?`
    : ' Model IDs have the form <author>/<model>.'
}
