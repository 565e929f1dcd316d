/**
 * Names that are not models: aliases (another name for a model) and automatic choices (`service/auto…`,
 * an ordered list of candidate models). An alias may point at a model the catalog does not have (yet): it
 * then answers 503 `model_alias_unavailable` at request time, and the boot log says so. Auto candidates
 * must be catalog models; Auto Free candidates must be free ones.
 */
import { log } from '../log.ts'
import type { CatalogProblem } from './catalog-problems.ts'
import type { Auto, Model } from './catalog-types.ts'

export function buildAliases(
  entries: { id: string; target: string }[],
  models: Map<string, Model>,
  problems: CatalogProblem[],
): Map<string, string> {
  const aliases = new Map<string, string>()
  entries.forEach((entry, index) => {
    if (models.has(entry.id) || aliases.has(entry.id))
      problems.push({
        path: ['aliases', index, 'id'],
        message: `"${entry.id}" is already a model or an alias`,
      })
    aliases.set(entry.id, entry.target)
  })
  for (const [id, target] of aliases) {
    if (!models.has(target) && !aliases.has(target))
      log.warn(
        `alias ${id} points at ${target}, which is not in the catalog; it answers model_alias_unavailable`,
      )
  }
  return aliases
}

export function buildAutos(
  entries: { id: string; candidates: string[]; free?: boolean }[],
  models: Map<string, Model>,
  problems: CatalogProblem[],
): Map<string, Auto> {
  const autos = new Map<string, Auto>()
  entries.forEach((entry, index) => {
    if (autos.has(entry.id))
      problems.push({
        path: ['auto', index, 'id'],
        message: `duplicate automatic choice "${entry.id}"`,
      })
    const free = entry.free ?? false
    entry.candidates.forEach((candidate, at) => {
      const model = models.get(candidate)
      const path = ['auto', index, 'candidates', at]
      if (!model) problems.push({ path, message: `unknown model "${candidate}"` })
      else if (free && !model.free)
        problems.push({
          path,
          message: `"${candidate}" is not free, and ${entry.id} uses free models only`,
        })
    })
    autos.set(entry.id, { id: entry.id, candidates: entry.candidates, free })
  })
  return autos
}

/** The model an alias leads to, following at most three aliases; undefined when it leads nowhere safe. */
export function resolveAlias(
  aliases: Map<string, string>,
  models: Map<string, Model>,
  id: string,
): Model | undefined {
  let current = id
  for (let step = 0; step < 3; step++) {
    const target = aliases.get(current)
    if (target === undefined) return undefined
    const model = models.get(target)
    if (model) return model
    current = target
  }
  return undefined
}
