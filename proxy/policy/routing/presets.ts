/**
 * Presets: a saved model choice of an account, called as `@preset/<slug>`: a model, its fallbacks and
 * default parameters. They load with the key record, so resolving one reads no Postgres; editing one
 * invalidates the account's cached keys on every process.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { KeyRecord, Preset } from '../../core/key-record.ts'

export const PRESET_PREFIX = '@preset/'

export const PRESET_PARAMS = ['temperature', 'top_p', 'max_tokens', 'stop'] as const

export function isPresetId(model: string): boolean {
  return model.startsWith(PRESET_PREFIX)
}

/** The preset a model ID names, or a 404 naming it. */
export function findPreset(key: KeyRecord, model: string, param: string): Preset | ServiceError {
  const slug = model.slice(PRESET_PREFIX.length)
  const preset = key.presets.get(slug)
  if (preset) return preset
  const known = [...key.presets.keys()].slice(0, 5).map((name) => `${PRESET_PREFIX}${name}`)
  const hint =
    known.length > 0 ? ` This account has ${known.join(', ')}.` : ' This account has no presets.'
  return new ServiceError('unknown_model', `Unknown preset: ${model}.${hint}`, { param })
}

/** Sets `body[field]` to the preset's value when the request left it unset. */
export function setDefault(body: object, field: string, value: unknown): void {
  const record = body as Record<string, unknown>
  if (value !== undefined && (record[field] === undefined || record[field] === null))
    record[field] = value
}

/**
 * A routing refusal of what a preset names, said of the preset: the client named `@preset/<slug>`, not
 * the model or fallback refused, and neither field of its request is the one to change. Refusals of the
 * request's own fallbacks (which replace the preset's) and of anything else are returned as they are.
 */
export function presetRefusal(
  error: ServiceError,
  presetId: string,
  fallbacksField: string,
  ownFallbacks: boolean,
): ServiceError {
  const param = error.details.param
  if (param === undefined) return error
  // The preset's fallbacks are named as the request's would be: `models[0]`, `fallbacks[0]`.
  const fallback =
    !ownFallbacks && param.startsWith(`${fallbacksField}[`)
      ? Number(param.slice(fallbacksField.length + 1, -1))
      : undefined
  const which =
    param === 'model' ? 'its model' : fallback !== undefined ? `its fallback ${fallback + 1}` : ''
  if (!which) return error
  const message = error.message.startsWith(`${param}: `)
    ? error.message.slice(param.length + 2)
    : error.message
  return new ServiceError(error.code, `${presetId} (${which}): ${message}`, {
    ...error.details,
    param: 'model',
  })
}
