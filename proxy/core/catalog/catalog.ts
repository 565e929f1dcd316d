/**
 * The catalog in memory: providers with their resolved API keys, models with prices in nano-USD and
 * their routes, aliases, automatic choices and image models. Loaded once at boot from `catalog.yaml` and
 * validated with every problem listed at its field, and at its line when it came from the file.
 */
import { buildAliases, buildAutos } from './catalog-choices.ts'
import {
  type CatalogProblem,
  type LocateField,
  problemLines,
  shapeProblems,
} from './catalog-problems.ts'
import type { CatalogFile, CatalogProvider } from './catalog-schema.ts'
import type { Catalog, Model, Provider, Route } from './catalog-types.ts'
import { readCatalogYaml } from './catalog-yaml.ts'
import { buildImageModels } from './image-models.ts'
import { toPricing } from './pricing.ts'

export class CatalogError extends Error {}

export type CatalogOptions = {
  /** Whether built-in providers serve (DEMO_MODEL); when not, they and the models only they serve are left out. */
  builtins: boolean
}

/** Where the catalog data came from: its name in messages, and where its fields are written. */
export type CatalogSource = { name: string; locate?: LocateField }

/** Reads and validates a catalog file; provider keys are taken from `env`. */
export async function loadCatalog(
  path: string,
  env: Record<string, string | undefined> = process.env,
  options: CatalogOptions = { builtins: true },
): Promise<Catalog> {
  const file = Bun.file(path)
  if (!(await file.exists()))
    throw new CatalogError(`Catalog file not found: ${path} (set CATALOG_FILE)`)
  const read = readCatalogYaml(await file.text(), path)
  if (!read.ok) throw new CatalogError(`Catalog ${path} is not valid YAML:\n  ${read.error}`)
  return buildCatalog(read.data, env, options, { name: path, locate: read.locate })
}

/** Validates parsed catalog data and builds the in-memory catalog. */
export function buildCatalog(
  data: unknown,
  env: Record<string, string | undefined>,
  options: CatalogOptions = { builtins: true },
  source: CatalogSource = { name: 'catalog' },
): Catalog {
  const invalid = (problems: CatalogProblem[]) =>
    new CatalogError(
      `Catalog ${source.name} is invalid:\n  ${problemLines(problems, source.locate).join('\n  ')}`,
    )
  const problems = shapeProblems(data)
  if (problems.length > 0) throw invalid(problems)
  const file = data as CatalogFile
  // Built-ins left out are skipped in place, so every problem keeps the index it has in the file.
  const leftOut = new Set(
    options.builtins
      ? []
      : file.providers.filter((entry) => 'builtin' in entry).map((entry) => entry.id),
  )

  const providers = new Map<string, Provider>()
  file.providers.forEach((entry, index) => {
    if (leftOut.has(entry.id)) return
    if (providers.has(entry.id))
      problems.push({
        path: ['providers', index, 'id'],
        message: `duplicate provider "${entry.id}"`,
      })
    providers.set(entry.id, providerOf(entry, env))
  })

  const models = new Map<string, Model>()
  file.models.forEach((entry, index) => {
    const at = ['models', index]
    const served = entry.routes
      .map((route, routeIndex) => ({ route, routeIndex }))
      .filter(({ route }) => !leftOut.has(route.provider))
    if (served.length === 0) return
    if (models.has(entry.id))
      problems.push({ path: [...at, 'id'], message: `duplicate model "${entry.id}"` })
    const pricing = toPricing(entry.pricing)
    if (typeof pricing === 'string')
      problems.push({ path: [...at, 'pricing', pricing], message: 'at most nine decimals' })
    const routes: Route[] = []
    for (const { route, routeIndex } of served) {
      const provider = providers.get(route.provider)
      if (!provider)
        problems.push({
          path: [...at, 'routes', routeIndex, 'provider'],
          message: `unknown provider "${route.provider}"`,
        })
      else
        routes.push({
          provider,
          upstreamModel: route.model,
          maxOutputTokens: entry.maxOutputTokens,
          reasoning: entry.capabilities?.reasoning,
        })
    }
    if (entry.maxOutputTokens > entry.contextLength)
      problems.push({ path: [...at, 'maxOutputTokens'], message: 'larger than contextLength' })
    if (typeof pricing === 'string') return
    models.set(entry.id, {
      id: entry.id,
      name: entry.name ?? entry.id,
      contextLength: entry.contextLength,
      maxOutputTokens: entry.maxOutputTokens,
      pricing,
      pricingUsd: entry.pricing,
      routes,
      free: entry.free ?? false,
      tokenizer: entry.tokenizer,
      capabilities: {
        tools: entry.capabilities?.tools ?? true,
        images: entry.capabilities?.images ?? true,
      },
    })
  })
  const aliases = buildAliases(file.aliases ?? [], models, problems)
  const autos = buildAutos(file.auto ?? [], models, problems)
  const images = buildImageModels(file.images ?? [], providers, problems)
  if (problems.length > 0) throw invalid(problems)
  return { providers, models, aliases, autos, images }
}

function providerOf(entry: CatalogProvider, env: Record<string, string | undefined>): Provider {
  if ('builtin' in entry) {
    return {
      id: entry.id,
      style: entry.style,
      baseUrl: `builtin://${entry.builtin}`,
      apiKeyEnv: undefined,
      apiKey: undefined,
      available: true,
      builtin: entry.builtin,
    }
  }
  const apiKey = entry.apiKeyEnv ? env[entry.apiKeyEnv] || undefined : undefined
  const available = entry.apiKeyEnv === undefined || apiKey !== undefined
  return {
    ...entry,
    baseUrl: entry.baseUrl.replace(/\/+$/, ''),
    apiKeyEnv: entry.apiKeyEnv,
    apiKey,
    available,
    builtin: undefined,
  }
}
