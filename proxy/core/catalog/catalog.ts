/**
 * The catalog in memory: providers with their resolved API keys, models with prices in nano-USD and
 * their routes, aliases, automatic choices and image models. Loaded once at boot from `catalog.yaml` and
 * validated with every problem listed.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { buildAliases, buildAutos } from './catalog-choices.ts'
import {
  CatalogBuiltinProvider,
  CatalogFile,
  CatalogHttpProvider,
  type CatalogModel,
  type CatalogProvider,
} from './catalog-schema.ts'
import type { Catalog, Model, Provider, Route } from './catalog-types.ts'
import { buildImageModels } from './image-models.ts'
import { toPricing } from './pricing.ts'

export class CatalogError extends Error {}

const checkFile = TypeCompiler.Compile(CatalogFile)
const checkProvider = {
  http: TypeCompiler.Compile(CatalogHttpProvider),
  builtin: TypeCompiler.Compile(CatalogBuiltinProvider),
}

/**
 * What is wrong with the file, each with its place. A provider is checked as the kind it says it is
 * (`builtin` or not), so a typo reads as that kind's problem rather than "no variant matched".
 */
function fileProblems(data: unknown): string[] {
  const providers = (data as { providers?: unknown }).providers
  return [...checkFile.Errors(data)]
    .flatMap((error) => {
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
    .slice(0, 20)
    .map((error) => `${error.path || '/'}: ${choices(error.schema) ?? error.message}`)
}

/** A choice among fixed values, named: "expected one of openai, anthropic". */
function choices(schema: unknown): string | undefined {
  const options = (schema as { anyOf?: { const?: unknown }[] }).anyOf
  if (!options?.every((option) => option.const !== undefined)) return undefined
  return `expected one of ${options.map((option) => option.const).join(', ')}`
}

export type CatalogOptions = {
  /** Whether built-in providers serve (DEMO_MODEL); when not, they and the models only they serve are left out. */
  builtins: boolean
}

/** Reads and validates a catalog file; provider keys are taken from `env`. */
export async function loadCatalog(
  path: string,
  env: Record<string, string | undefined> = process.env,
  options: CatalogOptions = { builtins: true },
): Promise<Catalog> {
  const file = Bun.file(path)
  if (!(await file.exists()))
    throw new CatalogError(`Catalog file not found: ${path} (set CATALOG_FILE)`)
  let data: unknown
  try {
    data = Bun.YAML.parse(await file.text())
  } catch (error) {
    throw new CatalogError(`Catalog ${path} is not valid YAML: ${(error as Error).message}`)
  }
  return buildCatalog(data, env, path, options)
}

/** Validates parsed catalog data and builds the in-memory catalog. */
export function buildCatalog(
  data: unknown,
  env: Record<string, string | undefined>,
  source = 'catalog',
  options: CatalogOptions = { builtins: true },
): Catalog {
  const problems = fileProblems(data)
  if (problems.length > 0)
    throw new CatalogError(`Catalog ${source} is invalid:\n  ${problems.join('\n  ')}`)
  const file = options.builtins ? (data as CatalogFile) : withoutBuiltins(data as CatalogFile)

  const providers = new Map<string, Provider>()
  file.providers.forEach((entry, index) => {
    if (providers.has(entry.id))
      problems.push(`/providers/${index}/id: duplicate provider "${entry.id}"`)
    providers.set(entry.id, providerOf(entry, env))
  })

  const models = new Map<string, Model>()
  file.models.forEach((entry, index) => {
    const at = `/models/${index}`
    if (models.has(entry.id)) problems.push(`${at}/id: duplicate model "${entry.id}"`)
    const pricing = toPricing(entry.pricing)
    if (typeof pricing === 'string')
      problems.push(`${at}/pricing/${pricing}: at most nine decimals`)
    const routes: Route[] = []
    entry.routes.forEach((route, routeIndex) => {
      const provider = providers.get(route.provider)
      if (!provider)
        problems.push(`${at}/routes/${routeIndex}/provider: unknown provider "${route.provider}"`)
      else
        routes.push({
          provider,
          upstreamModel: route.model,
          maxOutputTokens: entry.maxOutputTokens,
        })
    })
    if (entry.maxOutputTokens > entry.contextLength)
      problems.push(`${at}/maxOutputTokens: larger than contextLength`)
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
  if (problems.length > 0)
    throw new CatalogError(`Catalog ${source} is invalid:\n  ${problems.join('\n  ')}`)
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

/** The catalog without its built-in providers, their routes, and the models left with no route. */
function withoutBuiltins(file: CatalogFile): CatalogFile {
  const builtin = new Set(
    file.providers.filter((entry) => 'builtin' in entry).map((entry) => entry.id),
  )
  if (builtin.size === 0) return file
  const models = file.models
    .map((model) => ({
      ...model,
      routes: model.routes.filter((route) => !builtin.has(route.provider)),
    }))
    .filter((model) => model.routes.length > 0)
  return { ...file, providers: file.providers.filter((entry) => !builtin.has(entry.id)), models }
}
