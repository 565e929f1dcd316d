/**
 * What the styles' token-count endpoints share (`messages/count-tokens.ts`, `responses/input-tokens.ts`):
 * the body read and checked as a request's is, the model a count is of (preset, alias, automatic choice
 * and access, as a request resolves them: its first candidate), and the key's guardrail over the texts
 * counted. Each throws the refusal a request would get.
 */
import { ServiceError } from '../../shared/errors.ts'
import type { Candidate, Call } from '../core/call.ts'
import type { KeyRecord } from '../core/key-record.ts'
import type { TextVisitor } from '../core/texts.ts'
import { guard } from '../policy/guardrails/guard.ts'
import { findPreset, isPresetId } from '../policy/routing/presets.ts'
import { resolveRouting } from '../policy/routing/resolve.ts'
import type { Gateway } from './gateway.ts'
import { readJsonBody } from './read-body.ts'
import { checkSchemas } from './schema-limits.ts'
import { validate, type Envelope } from './validate.ts'

export async function countBody<T>(
  request: Request,
  envelope: Envelope<T>,
): Promise<{ body: T; bytes: number }> {
  const raw = await readJsonBody(request)
  if (!raw.ok) throw raw.error
  const valid = validate(raw.value, envelope)
  if (!valid.ok) throw valid.error
  const schemas = checkSchemas(valid.value as Record<string, unknown>)
  if (schemas) throw schemas
  return { body: valid.value, bytes: raw.bytes }
}

export function countedCandidate(
  gw: Gateway,
  key: KeyRecord,
  call: Call,
  model: string,
  request: { fallbacksField: string; tools: boolean; images: boolean },
): Candidate {
  call.requestedModel = model
  const preset = isPresetId(model) ? findPreset(key, model, 'model') : undefined
  if (preset instanceof ServiceError) throw preset
  const routing = resolveRouting(gw.catalog, gw.health, key, {
    model: preset?.model ?? model,
    fallbacks: [],
    fallbacksField: request.fallbacksField,
    features: { tools: request.tools, images: request.images },
    nowMs: Date.now(),
  })
  if (!routing.ok) throw routing.error
  return routing.candidates[0]!
}

/** The key's guardrail over what is counted: a block refuses, a redaction rewrites it and is noted. */
export async function guardCount(
  key: KeyRecord,
  call: Call,
  texts: (visit: TextVisitor) => void,
  kept?: (visit: TextVisitor) => void,
): Promise<void> {
  const guarded = await guard(key.guardrail, texts, kept)
  if (!guarded.ok) throw guarded.error
  if (guarded.redactions > 0)
    call.redactions = [...guarded.redactedBy]
      .map(([detector, count]) => `${detector}=${count}`)
      .join(', ')
}
