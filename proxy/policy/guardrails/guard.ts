/**
 * Stage 5: the key's guardrail inspects every text the client sent (messages, system prompt, tool
 * results, tool-call arguments), and the kept conversation a follow-up continues, before anything is
 * held or sent. A `block` filter that matches refuses
 * the request with 403 `guardrail_blocked`, naming the detector and never the matched text; `redact`
 * filters rewrite the matches in place. Memory only: a guardrail's filters are compiled once per version.
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { GuardrailRecord } from '../../core/key-record.ts'
import { log } from '../../core/log.ts'
import type { TextVisitor } from '../../core/texts.ts'
import { compileFilters, hasFilters, type CompiledFilters, type Finding } from './detectors.ts'
import { inspectTexts, type TextsInspection } from './inspect-texts.ts'
import { SCAN_DEADLINE_MS, ScanTimeout, scanInWorker, WORKER_ABOVE_CHARS } from './scan-thread.ts'

const compiled = new Map<string, { version: number; filters: CompiledFilters | undefined }>()

/** The guardrail's compiled filters; undefined when it has none. Stored filters were checked when saved. */
function filtersOf(guardrail: GuardrailRecord): CompiledFilters | undefined {
  const cached = compiled.get(guardrail.id)
  if (cached && cached.version === guardrail.version) return cached.filters
  let filters: CompiledFilters | undefined
  try {
    const built = compileFilters(guardrail.filters)
    filters = hasFilters(built) ? built : undefined
  } catch (error) {
    // Fail closed: a guardrail that cannot be applied must not let content through unchecked.
    log.error('guardrail filters do not compile; its requests are refused', {
      guardrailId: guardrail.id,
      error,
    })
    throw new ServiceError(
      'guardrail_blocked',
      "The key's guardrail could not be applied (its filters are invalid); nothing was sent or charged. Fix or unassign the guardrail.",
    )
  }
  compiled.set(guardrail.id, { version: guardrail.version, filters })
  return filters
}

export type GuardOutcome =
  | {
      ok: true
      redactions: number
      /** Redactions by detector (or named filter), in the order they were first found. */
      redactedBy: Map<string, number>
      bytesAdded: number
    }
  | { ok: false; error: ServiceError }

const NOTHING_REDACTED: GuardOutcome = {
  ok: true,
  redactions: 0,
  redactedBy: new Map(),
  bytesAdded: 0,
}

/**
 * Runs the guardrail over the texts `visitTexts` reaches, then those of `visitKept` (the kept
 * conversation a follow-up continues, which reaches the provider as kept whichever key sent it and
 * whatever filters applied then), rewriting redacted ones in place. Large texts are searched in the scan
 * worker (scan-thread.ts), so the answer is then a promise.
 */
export function guard(
  guardrail: GuardrailRecord | null,
  visitTexts: (visit: TextVisitor) => void,
  visitKept?: (visit: TextVisitor) => void,
): GuardOutcome | Promise<GuardOutcome> {
  if (!guardrail) return NOTHING_REDACTED
  let filters: CompiledFilters | undefined
  try {
    filters = filtersOf(guardrail)
  } catch (error) {
    return { ok: false, error: error as ServiceError }
  }
  if (!filters) return NOTHING_REDACTED
  const texts: string[] = []
  const collect: TextVisitor = (text) => {
    texts.push(text)
    return undefined
  }
  visitTexts(collect)
  const keptFrom = texts.length
  visitKept?.(collect)

  const outcome = (inspection: TextsInspection): GuardOutcome => {
    const { blocked } = inspection
    if (blocked)
      return {
        ok: false,
        error:
          blocked.index >= keptFrom
            ? blockedError(
                blocked.finding,
                ' in the stored conversation this request continues',
                'Start a new conversation without that content',
              )
            : blockedError(blocked.finding),
      }
    const redactedBy = new Map(inspection.redactedBy)
    if (redactedBy.size === 0) return NOTHING_REDACTED
    let index = 0
    let bytesAdded = 0
    const apply: TextVisitor = (text) => {
      const replaced = inspection.replaced[index++]
      if (replaced !== undefined)
        bytesAdded += Buffer.byteLength(replaced) - Buffer.byteLength(text)
      return replaced
    }
    visitTexts(apply)
    visitKept?.(apply)
    const redactions = [...redactedBy.values()].reduce((sum, count) => sum + count, 0)
    return { ok: true, redactions, redactedBy, bytesAdded }
  }

  let chars = 0
  for (const text of texts) chars += text.length
  if (chars <= WORKER_ABOVE_CHARS) return outcome(inspectTexts(texts, filters))
  return scanInWorker({
    guardrailId: guardrail.id,
    version: guardrail.version,
    filters: guardrail.filters,
    texts,
  }).then(outcome, (error: Error) => {
    log.warn('guardrail scan refused a request', { guardrailId: guardrail.id, error })
    return {
      ok: false,
      error: new ServiceError(
        'guardrail_blocked',
        error instanceof ScanTimeout
          ? `The key's guardrail could not finish inspecting this request's ${Math.round(chars / 1024)} KB of text within ${SCAN_DEADLINE_MS / 1000} s; nothing was sent or charged. Send less text, or simplify the guardrail's own patterns and keyword lists.`
          : "The key's guardrail could not inspect this request; nothing was sent or charged. Retry.",
      ),
    }
  })
}

/**
 * One text through the guardrail (an image prompt), with what it redacted as the answer's
 * `x-service-guardrail-redactions` says it (`email=2, phone=1`), if anything.
 */
export async function guardText(
  guardrail: GuardrailRecord | null,
  text: string,
): Promise<{ ok: true; text: string; redactions?: string } | { ok: false; error: ServiceError }> {
  const holder = { text }
  const outcome = await guard(guardrail, (visit) => {
    const replaced = visit(holder.text)
    if (replaced !== undefined) holder.text = replaced
  })
  if (!outcome.ok) return outcome
  if (outcome.redactions === 0) return { ok: true, text: holder.text }
  const redactions = [...outcome.redactedBy]
    .map(([detector, count]) => `${detector}=${count}`)
    .join(', ')
  return { ok: true, text: holder.text, redactions }
}

function blockedError(finding: Finding, where = '', remedy = 'Remove that content'): ServiceError {
  return new ServiceError(
    'guardrail_blocked',
    `The key's guardrail blocked this request: its ${finding.detector} filter matched${where}. Nothing was sent or charged. ` +
      `${remedy}, change the filter's action to redact, or unassign the guardrail.`,
  )
}
