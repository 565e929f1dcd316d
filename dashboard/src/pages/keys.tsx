/**
 * API keys: the account's keys with their status, limits, models and guardrail; create (the secret shown
 * once), edit, rotate (the old key works 24 more hours) and revoke (at once). Members see the list only.
 */
import { createAsyncStore, revalidate } from '@solidjs/router'
import { createSignal, Show } from 'solid-js'
import type { ApiKey, CreatedApiKey, RotatedKey } from '../../../shared/schemas/admin/keys.ts'
import { api } from '../api.ts'
import { getGuardrails, getKeyDefaults, getKeys } from '../data.ts'
import { createOptional } from '../reading.ts'
import { useAbilities } from '../session.tsx'
import { Dialog } from '../dialogs.tsx'
import { announce, Button, Card, Empty, Loaded, Page } from '../ui.tsx'
import { KeyForm } from './keys/key-form.tsx'
import { KeySecretDialog, type Revealed } from './keys/key-secret.tsx'
import { keyLabel, KeyTable } from './keys/key-table.tsx'
import { ReadOnlyNote, useManageBlock } from './policy/read-only.tsx'

export default function Keys() {
  const can = useAbilities()
  const blocked = useManageBlock()
  // Reconciled by id: a row's open dialog or focused button survives the list being read again.
  const keys = createAsyncStore(() => getKeys(), { reconcile: { key: 'id' } })
  // Guardrail names and the default caps fill in the table and the form; the list shows without them.
  const guardrails = createOptional(() => getGuardrails())
  const defaults = createOptional(() => getKeyDefaults())
  const reread = () => revalidate(getKeys.key)
  /** The key being edited, 'new' while creating, undefined when the form is closed. */
  const [editing, setEditing] = createSignal<ApiKey | 'new'>()
  const [revealed, setRevealed] = createSignal<Revealed>()

  const created = (key: CreatedApiKey) => {
    setEditing(undefined)
    setRevealed({ key: key.key, name: keyLabel(key) })
    void reread()
  }
  const saved = (key: ApiKey | undefined) => {
    setEditing(undefined)
    announce(key ? `Saved ${keyLabel(key)}.` : 'Nothing changed.')
    if (key) void reread()
  }
  const rotate = async (key: ApiKey) => {
    const rotated = await api<RotatedKey>('POST', `/keys/${key.id}/rotate`)
    // After the confirmation dialog has closed, so the secret's dialog is the one on top.
    setTimeout(() =>
      setRevealed({
        key: rotated.key,
        name: keyLabel(key),
        replaced: { prefix: key.prefix, expiresAt: rotated.oldKey.expiresAt },
      }),
    )
    void reread()
  }
  const revoke = async (key: ApiKey) => {
    await api<ApiKey>('POST', `/keys/${key.id}/revoke`)
    announce(`Revoked ${keyLabel(key)}.`)
    void reread()
  }

  return (
    <Page
      title="Keys"
      description="Keys authenticate requests to the API. Each key can have its own rate limits, spend caps, models and guardrail. A key's secret is shown once, when it is made."
      actions={
        <Button
          variant="primary"
          disabled={!can().manage}
          title={blocked()}
          onClick={() => setEditing('new')}
        >
          Create key
        </Button>
      }
    >
      <Show when={!can().manage}>
        <ReadOnlyNote
          what="keys"
          stillAllowed={
            can().revoke ? 'Keys can still be revoked, to stop one at once.' : undefined
          }
        />
      </Show>
      <Card>
        <Loaded data={keys} retry={reread}>
          {(list) => (
            <Show
              when={list.keys.length > 0}
              fallback={
                <Empty title="No keys yet">
                  <Show
                    when={can().manage}
                    fallback="The account's owner and admins can create one."
                  >
                    Create a key to call the API. Lost a key? Create a replacement here, then revoke
                    the lost one.
                  </Show>
                </Empty>
              }
            >
              <KeyTable
                keys={list.keys}
                guardrails={guardrails.latest()?.guardrails}
                canManage={can().manage}
                canRevoke={can().revoke}
                onEdit={setEditing}
                onRotate={rotate}
                onRevoke={revoke}
              />
            </Show>
          )}
        </Loaded>
      </Card>
      <Dialog
        open={editing() !== undefined}
        wide
        title={
          editing() === 'new' || editing() === undefined
            ? 'Create a key'
            : `Edit ${keyLabel(editing() as ApiKey)}`
        }
        onClose={() => setEditing(undefined)}
      >
        <Show when={editing()} keyed>
          {(target) => (
            <KeyForm
              apiKey={target === 'new' ? undefined : target}
              defaults={defaults.latest()}
              guardrails={guardrails.latest()?.guardrails}
              onCreated={created}
              onSaved={saved}
              onCancel={() => setEditing(undefined)}
            />
          )}
        </Show>
      </Dialog>
      <KeySecretDialog revealed={revealed()} onClose={() => setRevealed(undefined)} />
    </Page>
  )
}
