/**
 * One guardrail: its filters, models and budget, the keys it is assigned to, and assigning or removing a
 * key here (a key has at most one guardrail, so assigning moves a key from its current one).
 */
import { createSignal, For, Show } from 'solid-js'
import type { ApiKey } from '../../../../shared/schemas/admin/keys.ts'
import type { Guardrail } from '../../../../shared/schemas/admin/policy.ts'
import { api } from '../../api.ts'
import { keyWithPrefix, usd } from '../../format.ts'
import { ConfirmButton } from '../../dialogs.tsx'
import { SelectField, useSubmit } from '../../forms.tsx'
import { announce, Badge, Button, Card, ErrorNotice } from '../../ui.tsx'
import { keyLabel } from '../keys/key-table.tsx'
import { FilterSummary } from './filter-editor.tsx'
import { ModelList } from './model-list.tsx'
import { useManageBlock } from './read-only.tsx'

type Props = {
  guardrail: Guardrail
  keys: readonly ApiKey[] | undefined
  guardrails: readonly Guardrail[]
  canManage: boolean
  onEdit: () => void
  onDelete: () => Promise<unknown>
  /** After a key's assignment changed: read keys and guardrails again. */
  onAssigned: () => void
}

const usable = (key: ApiKey) => key.status === 'active' || key.status === 'in_grace'

export function GuardrailCard(props: Props) {
  const assigned = () =>
    props.guardrail.keyIds.map((id) => props.keys?.find((key) => key.id === id) ?? id)
  const candidates = () =>
    (props.keys ?? []).filter((key) => usable(key) && key.guardrailId !== props.guardrail.id)
  const [choice, setChoice] = createSignal('')
  const submit = useSubmit()
  const blocked = useManageBlock()

  const assign = async (keyId: string, guardrailId: string | null, words: string) => {
    const done = await submit.run(() => api<ApiKey>('PATCH', `/keys/${keyId}`, { guardrailId }))
    if (!done) return
    setChoice('')
    announce(words)
    props.onAssigned()
  }
  const optionLabel = (key: ApiKey) => {
    const current = props.guardrails.find((guardrail) => guardrail.id === key.guardrailId)
    return `${keyWithPrefix(key)}${current ? `, now ${current.name}` : ''}`
  }

  return (
    <Card
      title={props.guardrail.name}
      actions={
        <div class="row-actions">
          <Button
            variant="ghost"
            aria-label={`Edit ${props.guardrail.name}`}
            disabled={!props.canManage}
            title={blocked()}
            onClick={() => props.onEdit()}
          >
            Edit
          </Button>
          <ConfirmButton
            label="Delete"
            ariaLabel={`Delete ${props.guardrail.name}`}
            title={`Delete ${props.guardrail.name}?`}
            confirmLabel="Delete guardrail"
            disabled={!props.canManage}
            disabledTitle={blocked()}
            onConfirm={props.onDelete}
          >
            <p>
              <Show when={props.guardrail.keyIds.length > 0} fallback="No key uses it.">
                Its{' '}
                {props.guardrail.keyIds.length === 1
                  ? 'key keeps'
                  : `${props.guardrail.keyIds.length} keys keep`}{' '}
                working without it: no content filters, model list or budget from it any more.
              </Show>
            </p>
          </ConfirmButton>
        </div>
      }
    >
      <dl class="facts">
        <dt>Filters</dt>
        <dd>
          <FilterSummary filters={props.guardrail.filters} />
        </dd>
        <dt>Allowed models</dt>
        <dd>
          <ModelList models={props.guardrail.models} all="Any model" />
        </dd>
        <dt>Monthly budget</dt>
        <dd>
          <Show when={props.guardrail.budgetUsd} fallback={<span class="muted">None</span>}>
            {(amount) => (
              <Show
                when={props.guardrail.budgetUsed}
                fallback={<>{usd(amount())} a month across its keys (UTC months)</>}
              >
                {(used) => (
                  <>
                    {usd(used().monthUsd)} of {usd(amount())} used this month, across its keys (UTC
                    months){' '}
                    <Show when={used().monthNano >= props.guardrail.budgetNano!}>
                      <Badge tone="warn">Budget reached</Badge>
                    </Show>
                  </>
                )}
              </Show>
            )}
          </Show>
        </dd>
        <dt>Keys</dt>
        <dd class="stack">
          <Show
            when={assigned().length > 0}
            fallback={
              <span class="muted">
                Not assigned to any key: it has no effect until you assign it.
              </span>
            }
          >
            <ul class="plain-list">
              <For each={assigned()}>
                {(key) =>
                  typeof key === 'string' ? (
                    <li class="mono">{key}</li>
                  ) : (
                    <li class="row-actions">
                      <span>
                        {key.name || 'Unnamed key'} <code class="small muted">{key.prefix}…</code>
                      </span>
                      <Show when={!usable(key)}>
                        <Badge>{key.status === 'revoked' ? 'Revoked' : 'Expired'}</Badge>
                      </Show>
                      <Button
                        variant="ghost"
                        aria-label={`Unassign ${keyLabel(key)} from ${props.guardrail.name}`}
                        disabled={!props.canManage || submit.busy()}
                        onClick={() =>
                          void assign(
                            key.id,
                            null,
                            `${keyLabel(key)} no longer uses ${props.guardrail.name}.`,
                          )
                        }
                      >
                        Unassign
                      </Button>
                    </li>
                  )
                }
              </For>
            </ul>
          </Show>
          <Show when={props.canManage && candidates().length > 0}>
            <form
              class="row"
              onSubmit={(event) => {
                event.preventDefault()
                const key = candidates().find((candidate) => candidate.id === choice())
                if (key)
                  void assign(
                    key.id,
                    props.guardrail.id,
                    `${keyLabel(key)} now uses ${props.guardrail.name}.`,
                  )
              }}
            >
              <SelectField
                label={`Assign ${props.guardrail.name} to a key`}
                value={choice()}
                onValue={setChoice}
                options={[
                  { value: '', label: 'Choose a key…' },
                  ...candidates().map((key) => ({ value: key.id, label: optionLabel(key) })),
                ]}
              />
              <Button type="submit" disabled={!choice()} busy={submit.busy()}>
                Assign
              </Button>
            </form>
          </Show>
          <Show when={submit.error()}>
            <ErrorNotice error={submit.error()} />
          </Show>
        </dd>
      </dl>
    </Card>
  )
}
