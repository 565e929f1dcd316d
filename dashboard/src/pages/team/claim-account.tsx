/**
 * Why an accountless account has no team, and how to claim it: `POST /me/claim` on the API server with
 * one of the account's keys. The API server is another host than this dashboard, so the command keeps a
 * placeholder for it rather than guessing from this page's address.
 */
import { createSignal } from 'solid-js'
import { TextField } from '../../forms.tsx'
import { Card, CopyButton } from '../../ui.tsx'

/** A value inside a single-quoted shell word. */
const shellQuoted = (text: string) => text.replaceAll("'", `'\\''`)

export function claimCommand(email: string): string {
  const body = JSON.stringify({ email: email.trim() || 'you@example.com' })
  return [
    'curl https://YOUR_API_HOST/me/claim \\',
    '  -H "Authorization: Bearer YOUR_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '${shellQuoted(body)}'`,
  ].join('\n')
}

export function ClaimAccount() {
  const [email, setEmail] = createSignal('')
  return (
    <Card title="Teams need an identity">
      <p>
        This account has no e-mail address or wallet, so it cannot have a team: members are invited
        by e-mail and sign in with their own identity. Claim the account first by attaching your
        e-mail address (or a wallet). You become its owner and its keys and balance carry on; the
        dashboard link stops working, since you then sign in with your address. Claiming also gives
        the account recovery.
      </p>
      <ol class="stack claim-steps">
        <li>
          <p>
            Send this request with one of the account's API keys. Replace <code>YOUR_API_HOST</code>{' '}
            with the address of the API server (the one your model requests go to, not this
            dashboard's address) and <code>YOUR_API_KEY</code> with the key.
          </p>
          <TextField
            label="Your e-mail address"
            type="email"
            autocomplete="email"
            value={email()}
            onValue={setEmail}
            hint="Fills in the command; nothing is sent from here."
          />
          <div class="code-block">
            <pre>
              <code>{claimCommand(email())}</code>
            </pre>
            <CopyButton text={claimCommand(email())} label="Copy claim command" />
          </div>
        </li>
        <li>
          Open the confirmation link we e-mail to that address. The address is attached when you
          confirm it.
        </li>
        <li>
          Sign in with the address. This page then lists the members and lets you invite people.
        </li>
      </ol>
      <p class="small muted">
        To attach a wallet instead, send{' '}
        <code>{'{"wallet": {"message": "…", "signature": "0x…"}}'}</code>: a Sign-In with Ethereum
        message signed by the wallet. It is attached at once.
      </p>
    </Card>
  )
}
