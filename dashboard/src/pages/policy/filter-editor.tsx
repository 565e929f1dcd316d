/**
 * A guardrail's content filters as an editable list: a detector (built in, a custom RE2 pattern or a
 * keyword list), what to do on a match (block the request, or redact the match before it is sent), and
 * an optional label for refusals and redaction markers. The server compiles them when saved and names a
 * bad one as `filters[i].field`; that refusal is shown on the filter it names.
 */
import { For, Index, Show } from 'solid-js'
import type { GuardrailFilter } from '../../../../shared/schemas/admin/policy.ts'
import { Field, SelectField, TextField } from '../../forms.tsx'
import { Button } from '../../ui.tsx'

/** A filter as the form holds it: keywords as typed, one a line. */
export type FilterDraft = {
  detector: string
  action: string
  name: string
  pattern: string
  keywords: string
}

export const DETECTORS: readonly { value: string; label: string }[] = [
  { value: 'email', label: 'E-mail addresses' },
  { value: 'phone', label: 'Phone numbers' },
  { value: 'credit_card', label: 'Credit card numbers' },
  { value: 'iban', label: 'IBANs' },
  { value: 'us_ssn', label: 'US Social Security numbers' },
  { value: 'ip_address', label: 'IP addresses' },
  { value: 'secret', label: 'Secrets (API keys, tokens, private keys)' },
  { value: 'regex', label: 'Custom pattern' },
  { value: 'keywords', label: 'Keyword list' },
]

const ACTIONS = [
  { value: 'block', label: 'Block the request' },
  { value: 'redact', label: 'Redact the match' },
]

export const detectorLabel = (detector: string) =>
  DETECTORS.find((entry) => entry.value === detector)?.label ?? detector

export function toDraft(filter: unknown): FilterDraft {
  const stored = filter as Partial<GuardrailFilter>
  return {
    detector: stored.detector ?? 'email',
    action: stored.action ?? 'block',
    name: stored.name ?? '',
    pattern: stored.pattern ?? '',
    keywords: (stored.keywords ?? []).join('\n'),
  }
}

/** The filter as the API takes it: only the fields its detector allows. */
export function fromDraft(draft: FilterDraft): GuardrailFilter {
  const filter: GuardrailFilter = { detector: draft.detector, action: draft.action }
  if (draft.name.trim()) filter.name = draft.name.trim()
  if (draft.detector === 'regex') filter.pattern = draft.pattern
  if (draft.detector === 'keywords')
    filter.keywords = draft.keywords
      .split('\n')
      .map((keyword) => keyword.trim())
      .filter(Boolean)
  return filter
}

/** The filter and field a refusal names ("filters[2].pattern is not a valid pattern…"). */
export function filterErrorAt(
  message: string | null,
): { index: number; field: string } | undefined {
  const match = message ? /filters\[(\d+)\]\.?(\w*)/.exec(message) : null
  return match ? { index: Number(match[1]), field: match[2] || 'detector' } : undefined
}

export function FilterEditor(props: {
  filters: FilterDraft[]
  onChange: (filters: FilterDraft[]) => void
  error: string | null
}) {
  const at = () => filterErrorAt(props.error)
  const update = (index: number, change: Partial<FilterDraft>) =>
    props.onChange(
      props.filters.map((filter, i) => (i === index ? { ...filter, ...change } : filter)),
    )
  const errorFor = (index: number, field: string) => {
    const where = at()
    if (!where || where.index !== index) return null
    const known =
      field === where.field ||
      (field === 'detector' && !['action', 'name', 'pattern', 'keywords'].includes(where.field))
    return known ? props.error : null
  }
  return (
    <fieldset class="form-group">
      <legend>Content filters</legend>
      <p class="hint">
        Every text of a request is checked before it is sent. <strong>Block</strong> refuses the
        request (403 <code>guardrail_blocked</code>, naming the filter); <strong>redact</strong>{' '}
        replaces the match with <code>[REDACTED:label]</code> and sends the rest.
      </p>
      <Show when={props.filters.length === 0}>
        <p class="muted small">No filters: the guardrail only restricts models and budget.</p>
      </Show>
      <ol class="filter-list">
        <Index each={props.filters}>
          {(filter, index) => (
            <li class="filter-row">
              <fieldset>
                <legend>Filter {index + 1}</legend>
                <div class="row">
                  <SelectField
                    label="Detector"
                    value={filter().detector}
                    onValue={(detector) => update(index, { detector })}
                    options={DETECTORS}
                    error={errorFor(index, 'detector')}
                  />
                  <SelectField
                    label="Action"
                    value={filter().action}
                    onValue={(action) => update(index, { action })}
                    options={ACTIONS}
                    error={errorFor(index, 'action')}
                  />
                  <TextField
                    label="Label (optional)"
                    value={filter().name}
                    onValue={(name) => update(index, { name })}
                    maxlength={64}
                    hint="Names it in refusals and redaction markers."
                    error={errorFor(index, 'name')}
                  />
                </div>
                <Show when={filter().detector === 'regex'}>
                  <TextField
                    label="Pattern"
                    class="mono"
                    value={filter().pattern}
                    onValue={(pattern) => update(index, { pattern })}
                    maxlength={1000}
                    spellcheck={false}
                    hint="RE2 syntax (no look-around or back-references), case-sensitive; start with (?i) to ignore case."
                    error={errorFor(index, 'pattern')}
                  />
                </Show>
                <Show when={filter().detector === 'keywords'}>
                  <Field
                    label="Keywords"
                    hint="One a line. Matched as whole words, ignoring case."
                    error={errorFor(index, 'keywords')}
                  >
                    {(id, describedBy) => (
                      <textarea
                        id={id}
                        aria-describedby={describedBy}
                        rows={4}
                        value={filter().keywords}
                        onInput={(event) => update(index, { keywords: event.currentTarget.value })}
                      />
                    )}
                  </Field>
                </Show>
                <Button
                  variant="ghost"
                  aria-label={`Remove filter ${index + 1}`}
                  onClick={() => props.onChange(props.filters.filter((_, i) => i !== index))}
                >
                  Remove filter
                </Button>
              </fieldset>
            </li>
          )}
        </Index>
      </ol>
      <Show when={props.error && !at()}>
        <p class="field-error">{props.error}</p>
      </Show>
      <div>
        <Button
          onClick={() =>
            props.onChange([
              ...props.filters,
              { detector: 'email', action: 'redact', name: '', pattern: '', keywords: '' },
            ])
          }
        >
          Add filter
        </Button>
      </div>
    </fieldset>
  )
}

/** A filter in one line, for the guardrail list. */
export function FilterSummary(props: { filters: readonly unknown[] }) {
  return (
    <Show when={props.filters.length > 0} fallback={<span class="muted">No content filters</span>}>
      <ul class="plain-list">
        <For each={props.filters.map(toDraft)}>
          {(filter) => (
            <li>
              {filter.name ? `${filter.name}: ` : ''}
              {detectorLabel(filter.detector)}
              <Show when={filter.detector === 'regex'}>
                {' '}
                <code>{filter.pattern}</code>
              </Show>
              <Show when={filter.detector === 'keywords'}>
                {' '}
                ({filter.keywords.split('\n').filter(Boolean).join(', ')})
              </Show>
              {' → '}
              <span class={filter.action === 'block' ? 'badge bad' : 'badge warn'}>
                {filter.action}
              </span>
            </li>
          )}
        </For>
      </ul>
    </Show>
  )
}
