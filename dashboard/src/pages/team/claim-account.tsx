/**
 * Why an accountless account has no team, and how to claim it: `POST /me/claim` on the API server with
 * one of the account's keys. The API server is another host than this dashboard: the command names the
 * address the code samples use (the preset list's `baseUrl`), so it works as pasted but for the key.
 * Copying the command with a missing or malformed address is refused under the address field, since the
 * server would refuse the claim.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createSignal } from 'solid-js'
import { getPresets } from '../../data.ts'
import { focusFirstInvalid, readEmail, useFormCheck } from '../../form-check.ts'
import { TextField } from '../../forms.tsx'
import { Card, CopyButton, Loaded } from '../../ui.tsx'

/** A value inside a single-quoted shell word. */
const shellQuoted = (text: string) => text.replaceAll("'", `'\\''`)

/** The claim request for the API server at `baseUrl`. */
export function claimCommand(baseUrl: string, email: string): string {
  const body = JSON.stringify({ email: email.trim() || 'you@example.com' })
  return [
    `curl ${baseUrl}/me/claim \\`,
    '  -H "Authorization: Bearer YOUR_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '${shellQuoted(body)}'`,
  ].join('\n')
}

export function ClaimAccount() {
  const [email, setEmail] = createSignal('')
  const presets = createAsync(() => getPresets())
  const check = useFormCheck((field) =>
    field(() => readEmail(email(), 'email', 'Enter your e-mail address.')),
  )
  let form!: HTMLFormElement
  /** Whether the address is one the claim takes; if not, its problem shows and the field has the focus. */
  const ready = () => {
    if (check.take()) return true
    focusFirstInvalid(form)
    return false
  }
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
          <form
            ref={form}
            novalidate
            onSubmit={(event) => {
              event.preventDefault()
              ready()
            }}
          >
            <p>
              Send this request to the API server with one of the account's API keys: replace{' '}
              <code>YOUR_API_KEY</code> with the key.
            </p>
            <TextField
              label="Your e-mail address"
              type="email"
              name="email"
              autocomplete="email"
              required
              value={email()}
              onValue={setEmail}
              error={check.error('email')}
              hint="Fills in the command; nothing is sent from here."
            />
            <Loaded data={presets} retry={() => revalidate(getPresets.key)}>
              {(list) => (
                <div class="code-block">
                  <pre>
                    <code>{claimCommand(list.baseUrl, email())}</code>
                  </pre>
                  <CopyButton
                    text={claimCommand(list.baseUrl, email())}
                    label="Copy claim command"
                    check={ready}
                  />
                </div>
              )}
            </Loaded>
          </form>
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
