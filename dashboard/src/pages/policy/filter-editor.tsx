/**
 * A guardrail's content filters as an editable list: a detector (built in, a custom RE2 pattern or a
 * keyword list), what to do on a match (block the request, or redact the match before it is sent), and
 * an optional label for refusals and redaction markers. The form checks each filter's fields with the
 * rules the server compiles them by (shared/schemas/admin/field-rules.ts); what only the server can
 * check (an RE2 pattern's syntax) it refuses as "Filter 2: Pattern …", shown under that filter's field.
 */
import { For, Index, Show } from 'solid-js'
import {
  FILTER_ACTIONS,
  FILTER_DETECTORS,
  FILTER_LABELS,
  FILTER_RULES,
  filterLabel,
  GUARDRAIL_LABELS,
  type FilterDetector,
  type FilterField,
} from '../../../../shared/schemas/admin/field-rules.ts'
import type { GuardrailFilter } from '../../../../shared/schemas/admin/policy.ts'
import { refuse, type ReadField } from '../../form-check.ts'
import { Field, SelectField, TextField } from '../../forms.tsx'
import { Button } from '../../ui.tsx'

/** A filter as the form holds it: keywords as typed, one a line or separated by commas. */
export type FilterDraft = {
  detector: string
  action: string
  name: string
  pattern: string
  keywords: string
}

/** What each detector finds, in words (a detector the server adds fails the type check until named here). */
const DETECTOR_NAMES: Record<FilterDetector, string> = {
  email: 'E-mail addresses',
  phone: 'Phone numbers',
  credit_card: 'Credit card numbers',
  iban: 'IBANs',
  us_ssn: 'US Social Security numbers',
  ip_address: 'IP addresses',
  secret: 'Secrets (API keys, tokens, private keys)',
  regex: 'Custom pattern',
  keywords: 'Keyword list',
}

export const DETECTORS: readonly { value: string; label: string }[] = FILTER_DETECTORS.map(
  (value) => ({ value, label: DETECTOR_NAMES[value] }),
)

const ACTION_NAMES: Record<(typeof FILTER_ACTIONS)[number], string> = {
  block: 'Block the request',
  redact: 'Redact the match',
}
const ACTIONS = FILTER_ACTIONS.map((value) => ({ value, label: ACTION_NAMES[value] }))

const NAME_FORBIDDEN = new RegExp(FILTER_RULES.nameForbidden)

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

// A comma separates keywords as a new line does: "bananas, secret project" is two keywords.
const keywordsOf = (draft: FilterDraft) =>
  draft.keywords
    .split(/[\n,]/)
    .map((keyword) => keyword.trim())
    .filter(Boolean)

/** The filter as the API takes it: only the fields its detector allows. */
export function fromDraft(draft: FilterDraft): GuardrailFilter {
  const filter: GuardrailFilter = { detector: draft.detector, action: draft.action }
  if (draft.name.trim()) filter.name = draft.name.trim()
  if (draft.detector === 'regex') filter.pattern = draft.pattern
  if (draft.detector === 'keywords') filter.keywords = keywordsOf(draft)
  return filter
}

/** The name of a filter's field in a refusal: `filters[1].pattern`. */
const paramOf = (index: number, field: FilterField) => `filters[${index}].${field}`

/**
 * The filters as the API takes them, each field read through `field` and refused (naming
 * `filters[i].<field>`) where it breaks a rule the server compiles filters by.
 */
export function readFilters(drafts: readonly FilterDraft[], field: ReadField): GuardrailFilter[] {
  field(() => {
    if (drafts.length > FILTER_RULES.maxFilters)
      throw refuse('filters', `At most ${FILTER_RULES.maxFilters} filters: remove some.`)
  })
  drafts.forEach((draft, index) => {
    const name = draft.name.trim()
    field(() => {
      if (name.length > FILTER_RULES.nameMaxLength || NAME_FORBIDDEN.test(name))
        throw refuse(
          paramOf(index, 'name'),
          `Use at most ${FILTER_RULES.nameMaxLength} characters, without brackets or control characters.`,
        )
    })
    if (draft.detector === 'regex')
      field(() => {
        if (draft.pattern === '')
          throw refuse(paramOf(index, 'pattern'), 'Enter a pattern, or choose another detector.')
        if (draft.pattern.length > FILTER_RULES.patternMaxLength)
          throw refuse(
            paramOf(index, 'pattern'),
            `Use at most ${FILTER_RULES.patternMaxLength.toLocaleString('en-US')} characters.`,
          )
      })
    if (draft.detector === 'keywords')
      field(() => {
        const keywords = keywordsOf(draft)
        const param = paramOf(index, 'keywords')
        if (keywords.length === 0)
          throw refuse(param, 'Enter at least one keyword, one a line, or choose another detector.')
        if (keywords.length > FILTER_RULES.maxKeywords)
          throw refuse(param, `At most ${FILTER_RULES.maxKeywords} keywords.`)
        const long = keywords.findIndex((keyword) => keyword.length > FILTER_RULES.keywordMaxLength)
        if (long >= 0)
          throw refuse(
            param,
            `Keyword ${long + 1} is longer than ${FILTER_RULES.keywordMaxLength} characters.`,
          )
      })
  })
  return drafts.map(fromDraft)
}

/**
 * The filter field a server refusal belongs to: `filters[1].pattern` for a param that names it, or for
 * "Filter 2: Pattern …" under the param `filters` (the server's words for a filter it could not
 * compile); `filters` for the list as a whole.
 */
export function filterParam(param: string, message: string): string {
  const named = /^filters\[(\d+)\](?:\.(\w+))?/.exec(param)
  const worded = named ? undefined : /^Filter (\d+)(?:: (\w+))?/.exec(message)
  if (!named && !worded) return 'filters'
  const index = named ? Number(named[1]) : Number(worded![1]) - 1
  const field =
    (Object.keys(FILTER_LABELS) as FilterField[]).find((key) =>
      named ? key === named[2] : FILTER_LABELS[key] === worded![2],
    ) ?? 'detector'
  return paramOf(index, field)
}

export function FilterEditor(props: {
  filters: FilterDraft[]
  onChange: (filters: FilterDraft[]) => void
  /** The problem of one filter's field (`filters[0].pattern`), or of the list (`filters`). */
  error: (param: string) => string | null | undefined
}) {
  const update = (index: number, change: Partial<FilterDraft>) =>
    props.onChange(
      props.filters.map((filter, i) => (i === index ? { ...filter, ...change } : filter)),
    )
  const errorFor = (index: number, field: FilterField) => props.error(paramOf(index, field))
  return (
    <fieldset class="form-group">
      <legend>{GUARDRAIL_LABELS.filters}</legend>
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
                <legend>{filterLabel(index)}</legend>
                <div class="row">
                  <SelectField
                    label={FILTER_LABELS.detector}
                    value={filter().detector}
                    onValue={(detector) => update(index, { detector })}
                    options={DETECTORS}
                    error={errorFor(index, 'detector')}
                  />
                  <SelectField
                    label={FILTER_LABELS.action}
                    value={filter().action}
                    onValue={(action) => update(index, { action })}
                    options={ACTIONS}
                    error={errorFor(index, 'action')}
                  />
                  <TextField
                    label={`${FILTER_LABELS.name} (optional)`}
                    value={filter().name}
                    onValue={(name) => update(index, { name })}
                    maxlength={FILTER_RULES.nameMaxLength}
                    hint="Names it in refusals and redaction markers."
                    error={errorFor(index, 'name')}
                  />
                </div>
                <Show when={filter().detector === 'regex'}>
                  <TextField
                    label={FILTER_LABELS.pattern}
                    class="mono"
                    value={filter().pattern}
                    onValue={(pattern) => update(index, { pattern })}
                    maxlength={FILTER_RULES.patternMaxLength}
                    spellcheck={false}
                    hint="RE2 syntax (no look-around or back-references), case-sensitive; start with (?i) to ignore case."
                    error={errorFor(index, 'pattern')}
                  />
                </Show>
                <Show when={filter().detector === 'keywords'}>
                  <Field
                    label={FILTER_LABELS.keywords}
                    hint="One a line, or separated by commas. Matched as whole words, ignoring case."
                    error={errorFor(index, 'keywords')}
                  >
                    {(id, describedBy) => (
                      <textarea
                        id={id}
                        aria-describedby={describedBy()}
                        aria-invalid={errorFor(index, 'keywords') ? 'true' : undefined}
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
      <Show when={props.error('filters')}>
        <p class="field-error">{props.error('filters')}</p>
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

/** Keywords each in quotes, so that one with a space or a comma reads as one: “a”, “b c”. */
const quoted = (keywords: string[]) => keywords.map((keyword) => `“${keyword}”`).join(', ')

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
                ({quoted(filter.keywords.split('\n').filter(Boolean))})
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
