/**
 * A guardrail's filters over a request's texts, in order: the first block finding stops the scan;
 * otherwise each redacted text's new form. Pure, so it runs on the request's thread for small texts and
 * in the scan worker (scan-worker.ts) for large ones.
 */
import { inspectText, type CompiledFilters, type Finding } from './detectors.ts'

export type TextsInspection = {
  /** The first block finding, and the index of the text it was found in. */
  blocked?: { finding: Finding; index: number }
  /** The new form of each redacted text, by index; absent where nothing was redacted. */
  replaced: Record<number, string>
  /** Redactions by detector (or named filter), in the order they were first found. */
  redactedBy: [string, number][]
}

export function inspectTexts(texts: string[], filters: CompiledFilters): TextsInspection {
  const replaced: Record<number, string> = {}
  const redactedBy = new Map<string, number>()
  for (const [index, text] of texts.entries()) {
    const result = inspectText(text, filters)
    if (result.blocked)
      return { blocked: { finding: result.blocked, index }, replaced, redactedBy: [] }
    if (result.text === text) continue
    replaced[index] = result.text
    for (const finding of result.redacted)
      redactedBy.set(
        finding.detector,
        (redactedBy.get(finding.detector) ?? 0) + (finding.count ?? 1),
      )
  }
  return { replaced, redactedBy: [...redactedBy] }
}
