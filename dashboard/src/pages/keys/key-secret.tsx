/**
 * A new key's secret, shown this once: after creating a key, and after rotating one (with the end of the
 * old key's grace). Only the prefix is stored, so closing this is the last chance to copy it.
 */
import { Show } from 'solid-js'
import { dateTime, relative } from '../../format.ts'
import { Dialog } from '../../dialogs.tsx'
import { Button, Notice, SecretValue } from '../../ui.tsx'

export type Revealed = {
  key: string
  name: string
  /** After a rotation: the key it replaces and when that one stops working. */
  replaced?: { prefix: string; expiresAt: string }
}

export function KeySecretDialog(props: { revealed: Revealed | undefined; onClose: () => void }) {
  return (
    <Dialog
      open={!!props.revealed}
      title={props.revealed?.replaced ? 'Key rotated' : 'Key created'}
      onClose={() => props.onClose()}
    >
      <Show when={props.revealed}>
        {(revealed) => (
          <div class="stack">
            <Notice tone="warning" title="Copy the key now">
              You will not see it again: only its first characters are stored. If you lose it,
              create or rotate a key.
            </Notice>
            <SecretValue label="API key" value={revealed().key} />
            <Show when={revealed().replaced}>
              {(replaced) => (
                <p>
                  The old key <code>{replaced().prefix}…</code> keeps working until{' '}
                  <time datetime={replaced().expiresAt}>{dateTime(replaced().expiresAt)}</time> (
                  {relative(replaced().expiresAt)}), then stops. Update your clients before then, or
                  revoke it now if it leaked.
                </p>
              )}
            </Show>
            <p class="small muted">
              Send it as <code>Authorization: Bearer &lt;key&gt;</code> (or <code>x-api-key</code>{' '}
              for the Messages style).
            </p>
            <div class="dialog-actions">
              <Button variant="primary" onClick={() => props.onClose()}>
                I have saved it
              </Button>
            </div>
          </div>
        )}
      </Show>
    </Dialog>
  )
}
