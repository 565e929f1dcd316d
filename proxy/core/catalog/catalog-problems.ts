/**
 * What is wrong with a catalog, each problem at its field: the field's path (`models[3].pricing.inputPerMTok`)
 * and, for a catalog read from a file, the file, line and column where the operator wrote it
 * (`catalog.yaml:42:7`), so an editor or a terminal can jump there.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { CatalogBuiltinProvider, CatalogFile, CatalogHttpProvider } from './catalog-schema.ts'

/** A field of the catalog: the keys and list indexes that lead to it from the top. */
export type FieldPath = readonly (string | number)[]

export type CatalogProblem = { path: FieldPath; message: string }

/** Where a field is written, as `file:line:column`; undefined for a catalog that came from no file. */
export type LocateField = (path: FieldPath) => string | undefined

/** The most problems listed at once: past a few, they are mostly one mistake repeated. */
const MAX_LISTED = 20

/** `models[3].pricing.inputPerMTok`; a key that is not a plain name is quoted (`prices["1024x1024/hd"]`). */
export function fieldName(path: FieldPath): string {
  if (path.length === 0) return '(top level)'
  return path
    .map((step, index) => {
      if (typeof step === 'number') return `[${step}]`
      if (!/^[A-Za-z_][\w-]*$/.test(step)) return `[${JSON.stringify(step)}]`
      return index === 0 ? step : `.${step}`
    })
    .join('')
}

/** The problems as the lines of an error message, each with its place when the catalog has a file. */
export function problemLines(problems: CatalogProblem[], locate?: LocateField): string[] {
  const lines = problems.slice(0, MAX_LISTED).map((problem) => {
    const place = locate?.(problem.path)
    const field = `${fieldName(problem.path)}: ${problem.message}`
    return place ? `${place}: ${field}` : field
  })
  const unlisted = problems.length - lines.length
  if (unlisted > 0) lines.push(`…and ${unlisted} more (the first ${MAX_LISTED} are listed)`)
  return lines
}

const checkFile = TypeCompiler.Compile(CatalogFile)
const checkProvider = {
  http: TypeCompiler.Compile(CatalogHttpProvider),
  builtin: TypeCompiler.Compile(CatalogBuiltinProvider),
}

/**
 * Where the data does not have the catalog's shape, one problem per field. A provider is checked as the
 * kind it says it is (`builtin` or not), so a typo reads as that kind's problem rather than "no variant
 * matched".
 */
export function shapeProblems(data: unknown): CatalogProblem[] {
  const providers = (data as { providers?: unknown } | null)?.providers
  const errors = [...checkFile.Errors(data)].flatMap((error) => {
    const at = /^\/providers\/(\d+)$/.exec(error.path)
    const entry =
      at && Array.isArray(providers)
        ? (providers[Number(at[1])] as Record<string, unknown>)
        : undefined
    if (!entry || typeof entry !== 'object') return [error]
    const kind = 'builtin' in entry ? checkProvider.builtin : checkProvider.http
    return [...kind.Errors(entry)].map((inner) => ({
      ...inner,
      path: `${error.path}${inner.path}`,
    }))
  })
  // A missing field is also "Expected object" (or string…) at the same path: the first says it better.
  const seen = new Set<string>()
  return errors
    .filter((error) => !seen.has(error.path) && seen.add(error.path))
    .map((error) => ({
      path: pointerPath(error.path),
      message: choices(error.schema) ?? expected(error) ?? error.message,
    }))
}

/** A JSON pointer (`/models/3/pricing`) as a field path; list indexes become numbers. */
function pointerPath(pointer: string): FieldPath {
  if (pointer === '') return []
  return pointer
    .slice(1)
    .split('/')
    .map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((step) => (/^\d+$/.test(step) ? Number(step) : step))
}

/** A string of the wrong form, said in words rather than as its pattern, with what was written. */
function expected(error: { schema: unknown; value: unknown; path: string }): string | undefined {
  const { expects, pattern, not } = error.schema as {
    expects?: string
    pattern?: string
    not?: unknown
  }
  if (!expects) return undefined
  // A key no entry may have (Never): the key is what was written.
  if (not !== undefined)
    return `expected ${expects} (got ${JSON.stringify(pointerPath(error.path).at(-1))})`
  if (!pattern || typeof error.value !== 'string') return undefined
  if (new RegExp(pattern).test(error.value)) return undefined
  return `expected ${expects} (got ${JSON.stringify(error.value)})`
}

/** A choice among fixed values, named: "expected one of openai, anthropic". */
function choices(schema: unknown): string | undefined {
  const options = (schema as { anyOf?: { const?: unknown }[] }).anyOf
  if (!options?.every((option) => option.const !== undefined)) return undefined
  return `expected one of ${options.map((option) => option.const).join(', ')}`
}
