/**
 * Sign-in: by e-mail (a single-use link), by wallet (Sign-In with Ethereum through the browser's injected
 * wallet), or with a saved dashboard link. New users without an e-mail or wallet start at /setup.
 */
import { A, useNavigate, useSearchParams } from '@solidjs/router'
import { createSignal, Match, Show, Switch } from 'solid-js'
import { dashboardPath } from '../../../shared/dashboard-path.ts'
import type { MailSent, SignedIn, WalletNonce } from '../../../shared/schemas/admin/sign-in.ts'
import { api, get } from '../api.ts'
import { forgetReads } from '../data.ts'
import { focusFirstInvalid, readEmail, refuse, useFormCheck } from '../form-check.ts'
import { TextField, fieldError, useSubmit } from '../forms.tsx'
import { Button, ErrorNotice, Notice } from '../ui.tsx'

type Method = 'email' | 'wallet' | 'link'

type Ethereum = { request(args: { method: string; params?: unknown[] }): Promise<unknown> }

/** Where to go after signing in: a dashboard path from ?next=, never another site. */
export function afterSignIn(next: string | string[] | undefined): string {
  return dashboardPath(Array.isArray(next) ? next[0] : next) ?? '/dashboard'
}

export default function SignIn() {
  // Whoever signs in next may be someone else: nothing read for the last session is shown to them.
  forgetReads()
  const [params] = useSearchParams()
  const [method, setMethod] = createSignal<Method>('email')
  const tabs: { id: Method; label: string }[] = [
    { id: 'email', label: 'E-mail' },
    { id: 'wallet', label: 'Wallet' },
    { id: 'link', label: 'Dashboard link' },
  ]
  return (
    <main class="public" id="main">
      <div class="brand">
        <span class="brand-mark" aria-hidden="true" />
        Model Gateway
      </div>
      <section class="card" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in</h1>
        <Show when={typeof params.left === 'string' && params.left}>
          {(account) => (
            <Notice tone="success" title={`You left account ${account()}`}>
              <p>
                You belong to no other account now, so you were signed out. Signing in again starts
                a new account of your own; to rejoin, ask the owner for a new invitation.
              </p>
            </Notice>
          )}
        </Show>
        <Show when={params.link === 'refused'}>
          <Notice tone="warning" title="That dashboard link no longer opens an account">
            <p>
              It was replaced or revoked, or its account was claimed: a claimed account signs in
              with its e-mail address or wallet.
            </p>
          </Notice>
        </Show>
        <div class="tabs" role="tablist" aria-label="How to sign in">
          {tabs.map((tab) => (
            <button
              type="button"
              role="tab"
              id={`tab-${tab.id}`}
              aria-controls={`panel-${tab.id}`}
              aria-selected={method() === tab.id}
              tabindex={method() === tab.id ? 0 : -1}
              onClick={() => setMethod(tab.id)}
              onKeyDown={(event) => {
                const index = tabs.findIndex((entry) => entry.id === method())
                const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
                if (!step) return
                const next = tabs[(index + step + tabs.length) % tabs.length]!
                setMethod(next.id)
                document.getElementById(`tab-${next.id}`)?.focus()
              }}
            >
              {tab.label}
            </button>
          ))}
        </div>
        <div role="tabpanel" id={`panel-${method()}`} aria-labelledby={`tab-${method()}`}>
          <Switch>
            <Match when={method() === 'email'}>
              <EmailSignIn next={afterSignIn(params.next)} />
            </Match>
            <Match when={method() === 'wallet'}>
              <WalletSignIn next={afterSignIn(params.next)} />
            </Match>
            <Match when={method() === 'link'}>
              <LinkSignIn next={afterSignIn(params.next)} />
            </Match>
          </Switch>
        </div>
      </section>
      <p class="muted">
        No e-mail or wallet you want to use? <A href="/setup">Create an accountless account</A>: an
        API key and a dashboard link, nothing else.
      </p>
    </main>
  )
}

/** The mailed link carries `next`, so the confirm page lands where the user was going. */
function EmailSignIn(props: { next: string }) {
  const [email, setEmail] = createSignal('')
  const [sent, setSent] = createSignal<string>()
  const submit = useSubmit()
  const check = useFormCheck((field) =>
    field(() => readEmail(email(), 'email', 'Enter your e-mail address.')),
  )
  const error = () => check.error('email') ?? fieldError(submit.error(), 'email')
  const send = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const address = check.take()
    if (!address) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    const answer = await submit.run(() =>
      api<MailSent>('POST', '/auth/email', {
        email: address,
        // The dashboard's home needs no `next`, which keeps the usual link short.
        next: props.next === '/dashboard' ? undefined : props.next,
      }),
    )
    if (answer) setSent(answer.message)
    else focusFirstInvalid(form)
  }
  return (
    <Show
      when={!sent()}
      fallback={
        // The form the focus was in is gone: the confirmation takes it, so the keyboard stays here.
        <div tabindex="-1" ref={(element) => queueMicrotask(() => element.focus())}>
          <Notice tone="success" title="Check your inbox">
            <p>{sent()}</p>
            <p class="small">You can close this tab.</p>
          </Notice>
        </div>
      }
    >
      <form class="stack" onSubmit={send} novalidate>
        <TextField
          label="E-mail address"
          type="email"
          name="email"
          autocomplete="email"
          required
          value={email()}
          onValue={setEmail}
          error={error()}
          hint="We send you a sign-in link. No password."
        />
        <Show when={submit.error() && !fieldError(submit.error(), 'email')}>
          <ErrorNotice error={submit.error()} />
        </Show>
        <Button type="submit" variant="primary" busy={submit.busy()}>
          Send sign-in link
        </Button>
      </form>
    </Show>
  )
}

function WalletSignIn(props: { next: string }) {
  const navigate = useNavigate()
  const submit = useSubmit()
  const ethereum = () => (window as unknown as { ethereum?: Ethereum }).ethereum
  const signIn = async () => {
    const wallet = ethereum()
    if (!wallet) return
    const done = await submit.run(async () => {
      const [address] = (await wallet.request({ method: 'eth_requestAccounts' })) as string[]
      if (!address) throw new Error('The wallet shared no account.')
      const challenge = await get<WalletNonce>('/auth/wallet/nonce')
      const { createSiweMessage } = await import('viem/siwe')
      const message = createSiweMessage({
        address: address as `0x${string}`,
        chainId: challenge.chainId,
        domain: challenge.domain,
        nonce: challenge.nonce,
        uri: challenge.uri,
        version: '1',
        statement: 'Sign in to the Model Gateway dashboard.',
        issuedAt: new Date(),
        expirationTime: new Date(challenge.expiresAt),
      })
      const signature = (await wallet.request({
        method: 'personal_sign',
        params: [message, address],
      })) as string
      return api<SignedIn>('POST', '/auth/wallet', { message, signature })
    })
    if (done) navigate(props.next, { replace: true })
  }
  return (
    <div class="stack">
      <Show
        when={ethereum()}
        fallback={
          <Notice title="No wallet found">
            This browser has no Ethereum wallet. Install one (or open this page in your wallet's
            browser), then reload.
          </Notice>
        }
      >
        <p class="muted">
          Your wallet asks you to sign a message. Signing costs nothing and sends no transaction.
        </p>
        <Show when={submit.error()}>
          <ErrorNotice error={submit.error()} />
        </Show>
        <Button variant="primary" busy={submit.busy()} onClick={signIn}>
          Sign in with wallet
        </Button>
      </Show>
    </div>
  )
}

function LinkSignIn(props: { next: string }) {
  const navigate = useNavigate()
  const [link, setLink] = createSignal('')
  const submit = useSubmit()
  const check = useFormCheck((field) =>
    field(() => {
      const text = link().trim()
      if (!text) throw refuse('link', 'Paste your dashboard link.')
      return text
    }),
  )
  const open = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const text = check.take()
    if (!text) {
      submit.clear()
      return focusFirstInvalid(form)
    }
    // The whole link (…/dashboard#link=SECRET) or the secret alone.
    const secret = /#link=([^&\s]+)/.exec(text)?.[1] ?? text
    const done = await submit.run(() =>
      api<SignedIn>('POST', '/session/link', { secret: decodeURIComponent(secret) }),
    )
    if (done) navigate(props.next, { replace: true })
  }
  return (
    <form class="stack" onSubmit={open} novalidate>
      <TextField
        label="Dashboard link"
        name="link"
        autocomplete="off"
        required
        value={link()}
        onValue={setLink}
        error={check.error('link')}
        hint="The link you saved when the account was created. It stays valid when keys are rotated."
      />
      <Show when={submit.error()}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <Button type="submit" variant="primary" busy={submit.busy()}>
        Open dashboard
      </Button>
    </form>
  )
}
