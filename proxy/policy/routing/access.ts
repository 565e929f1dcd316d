/**
 * Model access: a key may call a model when the key's allowed models, its guardrail's allowlist and the
 * account's routing list all include it (a missing list allows everything). Memory only: the three lists
 * come with the key record.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { KeyRecord } from '../../core/key-record.ts'

export function mayUse(key: KeyRecord, modelId: string): boolean {
  return (
    (!key.allowedModels || key.allowedModels.has(modelId)) &&
    (!key.guardrail?.allowedModels || key.guardrail.allowedModels.has(modelId)) &&
    (!key.accountModels || key.accountModels.has(modelId))
  )
}

/**
 * 403 `model_not_allowed` naming which policy forbids the model, and a model the key may call instead:
 * one that `servable` says has a provider to serve it (set up on this gateway and within the account's
 * provider restrictions) when there is one, so the suggestion can be followed.
 */
export function notAllowed(
  key: KeyRecord,
  modelId: string,
  knownIds: Iterable<string>,
  param: string,
  servable: (id: string) => boolean = () => true,
  /** What `knownIds` are, for the message when the key may call none of them. */
  noun = 'catalog model',
): ServiceError {
  const policy =
    key.allowedModels && !key.allowedModels.has(modelId)
      ? "this key's allowed models"
      : key.guardrail?.allowedModels && !key.guardrail.allowedModels.has(modelId)
        ? "the key's guardrail"
        : "the account's routing restrictions"
  let suggestion: string | undefined
  let unservable: string | undefined
  for (const id of knownIds) {
    if (!mayUse(key, id)) continue
    if (servable(id)) {
      suggestion = id
      break
    }
    unservable ??= id
  }
  suggestion ??= unservable
  const hint = suggestion
    ? ` This key may call, for example, ${suggestion}.`
    : ` No ${noun} is allowed for this key.`
  return new ServiceError('model_not_allowed', `${modelId} is not allowed by ${policy}.${hint}`, {
    param,
  })
}
