/**
 * Guardrails: content filters (block or redact), an allowed-model list and a monthly budget, shared by
 * the keys they are assigned to. List, create, edit, delete, and assign keys. Members see them only.
 */
import { createResource, createSignal, For, Show } from 'solid-js'
import type { ApiKeys } from '../../../shared/schemas/admin/keys.ts'
import type { Guardrail, GuardrailDeleted, Guardrails as GuardrailList } from '../../../shared/schemas/admin/policy.ts'
import { api, get } from '../api.ts'
import { useAbilities } from '../session.tsx'
import { Dialog } from '../dialogs.tsx'
import { announce, Button, Empty, Loaded, Page } from '../ui.tsx'
import { GuardrailCard } from './policy/guardrail-card.tsx'
import { GuardrailForm } from './policy/guardrail-form.tsx'
import { OWNER_OR_ADMIN, ReadOnlyNote } from './policy/read-only.tsx'
import { reconciled } from './policy/reconciled.ts'

export default function Guardrails() {
  const can = useAbilities()
  const [guardrails, { refetch }] = createResource(() => get<GuardrailList>('/guardrails'), { storage: reconciled })
  const [keys, keyActions] = createResource(() => get<ApiKeys>('/keys'), { storage: reconciled })
  const [editing, setEditing] = createSignal<Guardrail | 'new'>()

  const saved = (guardrail: Guardrail | undefined) => {
    const created = editing() === 'new'
    setEditing(undefined)
    announce(guardrail ? `${created ? 'Created' : 'Saved'} ${guardrail.name}.` : 'Nothing changed.')
    if (guardrail) void refetch()
  }
  const remove = async (guardrail: Guardrail) => {
    const deleted = await api<GuardrailDeleted>('DELETE', `/guardrails/${guardrail.id}`)
    announce(`Deleted ${guardrail.name}${deleted.unassignedKeyIds.length > 0 ? `; ${deleted.unassignedKeyIds.length} keys no longer use it` : ''}.`)
    void refetch()
    void keyActions.refetch()
  }
  const reread = () => {
    void refetch()
    void keyActions.refetch()
  }

  return (
    <Page
      title="Guardrails"
      description="A guardrail filters what its keys send (block or redact personal data, secrets, your own patterns and words), limits the models they may call and caps what they spend together each month."
      actions={
        <Button variant="primary" disabled={!can().manage} title={can().manage ? undefined : OWNER_OR_ADMIN} onClick={() => setEditing('new')}>
          New guardrail
        </Button>
      }
    >
      <Show when={!can().manage}>
        <ReadOnlyNote what="guardrails" />
      </Show>
      <Loaded data={guardrails} retry={refetch}>
        {(list) => (
          <Show
            when={list.guardrails.length > 0}
            fallback={
              <Empty title="No guardrails yet">
                Create one, then assign it to the keys it should apply to. A key without a guardrail is limited only by its own settings and the account's
                routing.
              </Empty>
            }
          >
            <div class="stack">
              <For each={list.guardrails}>
                {(guardrail) => (
                  <GuardrailCard
                    guardrail={guardrail}
                    keys={keys.latest?.keys}
                    guardrails={list.guardrails}
                    canManage={can().manage}
                    onEdit={() => setEditing(guardrail)}
                    onDelete={() => remove(guardrail)}
                    onAssigned={reread}
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
        title={editing() === 'new' || editing() === undefined ? 'New guardrail' : `Edit ${(editing() as Guardrail).name}`}
        onClose={() => setEditing(undefined)}
      >
        <Show when={editing()} keyed>
          {(target) => <GuardrailForm guardrail={target === 'new' ? undefined : target} onSaved={saved} onCancel={() => setEditing(undefined)} />}
        </Show>
      </Dialog>
    </Page>
  )
}
