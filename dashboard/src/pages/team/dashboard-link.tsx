/**
 * The dashboard link of an accountless account, for its owner: replace it (a new link, shown once; the
 * old one and the sessions it opened elsewhere end, this one goes on) when it may have leaked, or revoke
 * it. Nothing recovers an accountless account, so revoking warns that the API key is then the only way in.
 */
import { createSignal, Show } from 'solid-js'
import type { ReplacedLink } from '../../../../shared/schemas/admin/setup.ts'
import { api } from '../../api.ts'
import { ConfirmButton } from '../../dialogs.tsx'
import { useAbilities } from '../../session.tsx'
import { announce, Card, Notice, SecretValue } from '../../ui.tsx'

export function DashboardLinkCard() {
  const can = useAbilities()
  const [replaced, setReplaced] = createSignal<string>()
  const replace = async () => {
    const answer = await api<ReplacedLink>('POST', '/account/link')
    setReplaced(answer.dashboardLink)
    announce('Dashboard link replaced. Save the new one now.')
  }
  const revoke = async () => {
    await api('DELETE', '/account/link')
    setReplaced(undefined)
    announce('Dashboard link revoked.')
  }
  return (
    <Card title="Dashboard link">
      <p>
        The link this account was set up with opens this dashboard as its owner. If it may have been
        seen by someone else, replace it: the old link stops working at once and every browser it
        opened is signed out, except this one.
      </p>
      <Show when={replaced()}>
        {(link) => (
          <Notice tone="warning" title="Save the new link now">
            <SecretValue
              label="New dashboard link"
              value={link()}
              hint="It is shown only this once. The old link no longer opens the account."
            />
          </Notice>
        )}
      </Show>
      <div class="row">
        <ConfirmButton
          label="Replace link"
          title="Replace the dashboard link?"
          confirmLabel="Replace"
          variant="secondary"
          disabled={!can().link}
          onConfirm={replace}
        >
          The current link stops working and every other browser signed in with it is signed out.
          The new link is shown once.
        </ConfirmButton>
        <ConfirmButton
          label="Revoke link"
          title="Revoke the dashboard link?"
          confirmLabel="Revoke"
          disabled={!can().link}
          onConfirm={revoke}
        >
          No link will open this account any more. This browser stays signed in until its session
          ends; after that, only the API key reaches the account, and nothing can recover it if the
          key is lost too. Claim the account first if you want to keep dashboard access.
        </ConfirmButton>
      </div>
    </Card>
  )
}
