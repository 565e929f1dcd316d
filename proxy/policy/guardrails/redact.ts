/**
 * Rewriting a text once its redact filters have found their spans. Every filter scanned the original
 * text (so no detector sees another's markers), which means spans from different filters can overlap.
 */

/** A span found by one redact filter; `order` is the filter's place in the guardrail's list. */
export type LabelledSpan = { start: number; end: number; order: number; label: string }

/**
 * Replaces each span with `[REDACTED:<label>]`. Overlapping spans merge into one marker labelled by
 * the earliest filter among them, so nothing matched is left in the clear and markers never nest.
 */
export function redactSpans(text: string, spans: LabelledSpan[]): string {
  spans.sort((a, b) => a.start - b.start || a.order - b.order)
  let out = ''
  let copied = 0
  for (let i = 0; i < spans.length; ) {
    const start = spans[i]!.start
    let { end, order, label } = spans[i]!
    for (i++; i < spans.length && spans[i]!.start < end; i++) {
      end = Math.max(end, spans[i]!.end)
      if (spans[i]!.order < order) ({ order, label } = spans[i]!)
    }
    out += text.slice(copied, start) + `[REDACTED:${label}]`
    copied = end
  }
  return out + text.slice(copied)
}
