/**
 * Guardrails: content filters (block or redact), an allowed-model list and a monthly budget, shared by
 * the keys they are assigned to. List, create, edit, delete, and assign keys. Members see them only.
 */
import { createAsyncStore, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type { Guardrail, GuardrailDeleted } from '../../../shared/schemas/admin/policy.ts'
import { api } from '../api.ts'
import { getGuardrails, getKeys } from '../data.ts'
import { createOptional } from '../reading.ts'
import { useAbilities } from '../session.tsx'
import { Dialog } from '../dialogs.tsx'
import { announce, Button, Empty, Loaded, Page } from '../ui.tsx'
import { GuardrailCard } from './policy/guardrail-card.tsx'
import { GuardrailForm } from './policy/guardrail-form.tsx'
import { ReadOnlyNote, useManageBlock } from './policy/read-only.tsx'

export default function Guardrails() {
  const can = useAbilities()
  const blocked = useManageBlock()
  // Reconciled by id: a card's open dialog or focused button survives the lists being read again.
  const guardrails = createAsyncStore(() => getGuardrails(), { reconcile: { key: 'id' } })
  // The keys name a guardrail's keys and the ones to assign; the guardrails show without them.
  const keys = createOptional(() => getKeys(), { reconcile: { key: 'id' } })
  const [editing, setEditing] = createSignal<Guardrail | 'new'>()

  const saved = (guardrail: Guardrail | undefined) => {
    const created = editing() === 'new'
    setEditing(undefined)
    announce(guardrail ? `${created ? 'Created' : 'Saved'} ${guardrail.name}.` : 'Nothing changed.')
    if (guardrail) void revalidate(getGuardrails.key)
  }
  // A key's guardrail is on both lists: a deletion or an assignment changes both.
  const reread = () => revalidate([getGuardrails.key, getKeys.key])
  const remove = async (guardrail: Guardrail) => {
    const deleted = await api<GuardrailDeleted>('DELETE', `/guardrails/${guardrail.id}`)
    announce(
      `Deleted ${guardrail.name}${deleted.unassignedKeyIds.length > 0 ? `; ${deleted.unassignedKeyIds.length} keys no longer use it` : ''}.`,
    )
    void reread()
  }

  return (
    <Page
      title="Guardrails"
      description="A guardrail filters what its keys send (block or redact personal data, secrets, your own patterns and words), limits the models they may call and caps what they spend together each month."
      actions={
        <Button
          variant="primary"
          disabled={!can().manage}
          title={blocked()}
          onClick={() => setEditing('new')}
        >
          New guardrail
        </Button>
      }
    >
      <Show when={!can().manage}>
        <ReadOnlyNote what="guardrails" />
      </Show>
      <Loaded data={guardrails} retry={() => revalidate(getGuardrails.key)}>
        {(list) => (
          <Show
            when={list.guardrails.length > 0}
            fallback={
              <Empty title="No guardrails yet">
                Create one, then assign it to the keys it should apply to. A key without a guardrail
                is limited only by its own settings and the account's routing.
              </Empty>
            }
          >
            <div class="stack">
              <For each={list.guardrails}>
                {(guardrail) => (
                  <GuardrailCard
                    guardrail={guardrail}
                    keys={keys.latest()?.keys}
                    guardrails={list.guardrails}
                    canManage={can().manage}
                    onEdit={() => setEditing(guardrail)}
                    onDelete={() => remove(guardrail)}
                    onAssigned={() => void reread()}
                  />
                )}
              </For>
            </div>
          </Show>
        )}
      </Loaded>
      <Dialog
        open={editing() !== undefined}
        wide
        title={
          editing() === 'new' || editing() === undefined
            ? 'New guardrail'
            : `Edit ${(editing() as Guardrail).name}`
        }
        onClose={() => setEditing(undefined)}
      >
        <Show when={editing()} keyed>
          {(target) => (
            <GuardrailForm
              guardrail={target === 'new' ? undefined : target}
              onSaved={saved}
              onCancel={() => setEditing(undefined)}
            />
          )}
        </Show>
      </Dialog>
    </Page>
  )
}
