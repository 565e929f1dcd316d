/**
 * Image models: routes to OpenAI-style providers (`/images/generations`) and a price per image for each
 * size and quality, in nano-USD.
 */
import { usdToNano } from '../../../shared/money.ts'
import type { CatalogProblem } from './catalog-problems.ts'
import type { ImageModel, Provider, Route } from './catalog-types.ts'
import type { CatalogImageModel } from './catalog-schema.ts'

export function buildImageModels(
  entries: CatalogImageModel[],
  providers: Map<string, Provider>,
  problems: CatalogProblem[],
): Map<string, ImageModel> {
  const images = new Map<string, ImageModel>()
  entries.forEach((entry, index) => {
    const at = ['images', index]
    const routes: Route[] = []
    entry.routes.forEach((route, routeIndex) => {
      const provider = providers.get(route.provider)
      const path = [...at, 'routes', routeIndex, 'provider']
      if (!provider) problems.push({ path, message: `unknown provider "${route.provider}"` })
      else if (provider.style !== 'openai')
        problems.push({ path, message: 'image routes need an OpenAI-style provider' })
      else routes.push({ provider, upstreamModel: route.model, maxOutputTokens: 0 })
    })
    const pricesNano = new Map<string, number>()
    for (const [variant, usd] of Object.entries(entry.prices)) {
      const nano = usdToNano(usd)
      if (nano === undefined)
        problems.push({ path: [...at, 'prices', variant], message: 'at most nine decimals' })
      else pricesNano.set(variant, nano)
    }
    if (!pricesNano.has(`${entry.defaultSize}/${entry.defaultQuality}`))
      problems.push({
        path: [...at, 'defaultSize'],
        message: `no price for ${entry.defaultSize}/${entry.defaultQuality}`,
      })
    images.set(entry.id, {
      id: entry.id,
      name: entry.name ?? entry.id,
      routes,
      pricesNano,
      defaultSize: entry.defaultSize,
      defaultQuality: entry.defaultQuality,
    })
  })
  return images
}
