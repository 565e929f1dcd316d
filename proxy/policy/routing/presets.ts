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
