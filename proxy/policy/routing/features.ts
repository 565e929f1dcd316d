/** What a request needs a model to accept (tools, image inputs), and the first thing a model lacks. */
import type { Model } from '../../core/catalog/catalog-types.ts'

export type Features = { tools: boolean; images: boolean }

export type MissingFeature = { field: string; what: string }

export function missingFeature(model: Model, features: Features): MissingFeature | undefined {
  if (features.tools && !model.capabilities.tools) return { field: 'tools', what: 'tools' }
  if (features.images && !model.capabilities.images)
    return { field: 'messages', what: 'image inputs' }
  return undefined
}
