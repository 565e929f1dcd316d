/**
 * The signed-in frame: navigation, the account and role, sign-out, and the session every page reads.
 * The session read (`getMe`, preloaded by the /dashboard route) first exchanges a dashboard link
 * (`/dashboard#link=<secret>`) for the session cookie. Without a session the user is sent to sign in,
 * and brought back afterwards.
 */
import { A, revalidate, useLocation, useNavigate, type RouteSectionProps } from '@solidjs/router'
import { createEffect, For, on, onCleanup, Show, Suspense } from 'solid-js'
import { api, ApiError, onSignedOut } from './api.ts'
import { dashboardLinkRefused, getMe } from './data.ts'
import { createOptional } from './reading.ts'
import { SessionContext } from './session.tsx'
import { Button, ErrorNotice, Loading, Notice, announce } from './ui.tsx'

type NavItem = { href: string; label: string; group: string; owner?: boolean }

const NAV: NavItem[] = [
  { href: '/dashboard', label: 'Overview', group: 'Account' },
  { href: '/dashboard/keys', label: 'API keys', group: 'Account' },
  { href: '/dashboard/billing', label: 'Billing', group: 'Account' },
  { href: '/dashboard/team', label: 'Team', group: 'Account' },
  { href: '/dashboard/activity', label: 'Activity', group: 'Insight' },
  { href: '/dashboard/usage', label: 'Usage', group: 'Insight' },
  { href: '/dashboard/guardrails', label: 'Guardrails', group: 'Policy' },
  { href: '/dashboard/routing', label: 'Routing', group: 'Policy' },
  { href: '/dashboard/presets', label: 'Presets', group: 'Policy' },
  { href: '/dashboard/playground', label: 'Playground', group: 'Try' },
  { href: '/dashboard/support', label: 'Support', group: 'Help' },
]

export function Shell(props: RouteSectionProps) {
  const navigate = useNavigate()
  const location = useLocation()
  // The shell draws its own states of the session read: opening, failed (or signed out), or the frame.
  const me = createOptional(() => getMe())
  const rereadMe = () => revalidate(getMe.key)
  const refused = () => {
    const error = me.error()
    return error instanceof ApiError && error.status === 401
  }
  const toSignIn = () =>
    navigate(
      `/sign-in?next=${encodeURIComponent(location.pathname + location.search)}${dashboardLinkRefused() ? '&link=refused' : ''}`,
      { replace: true },
    )
  onCleanup(onSignedOut(toSignIn))
  // A new page takes the focus, as a page load would: keyboard and screen-reader users start reading it
  // rather than staying in the navigation. Filters (the query) keep the focus where it is.
  createEffect(
    on(
      () => location.pathname,
      () => document.getElementById('main')?.focus(),
      { defer: true },
    ),
  )

  const signOut = async () => {
    await api('DELETE', '/session').catch(() => undefined)
    // A full load, not a route change: nothing the signed-in pages read stays in memory for Back to show.
    window.location.replace('/sign-in')
  }
  const switchAccount = async (accountId: string) => {
    await api('PUT', '/session/account', { accountId })
    // Everything read so far was the other account's: every query is read again (the shown ones at once).
    await revalidate()
    announce('Switched account.')
  }

  return (
    <Show
      when={me.latest()}
      fallback={
        <main class="public" id="main">
          <Show when={me.error()} fallback={<Loading label="Opening your dashboard…" />}>
            <Show when={!refused()} fallback={<SignedOutRedirect go={toSignIn} />}>
              <div class="card">
                <ErrorNotice error={me.error()} retry={() => void rereadMe()} />
                <a href="/sign-in">Sign in again</a>
              </div>
            </Show>
          </Show>
        </main>
      }
    >
      {(current) => (
        <SessionContext.Provider value={{ me: current, refresh: rereadMe }}>
          <a
            class="skip-link"
            href="#main"
            onClick={(event) => {
              // The router takes the click for itself: focus moves to the page here.
              event.preventDefault()
              document.getElementById('main')?.focus()
            }}
          >
            Skip to content
          </a>
          <div class="shell">
            <nav class="sidebar" aria-label="Dashboard">
              <A href="/dashboard" class="brand" end>
                <span class="brand-mark" aria-hidden="true" />
                Model Gateway
              </A>
              <div class="nav">
                <For each={NAV}>
                  {(item, index) => (
                    <>
                      <Show when={index() === 0 || NAV[index() - 1]!.group !== item.group}>
                        <div class="nav-group" aria-hidden="true">
                          {item.group}
                        </div>
                      </Show>
                      <A href={item.href} end={item.href === '/dashboard'} activeClass="active">
                        {item.label}
                      </A>
                    </>
                  )}
                </For>
              </div>
              <div class="account-box">
                <span>
                  <Show when={current().user} fallback={<>Dashboard link</>}>
                    {(user) => <>{user().email ?? shortWallet(user().wallet)}</>}
                  </Show>
                  {' · '}
                  <span class="role">{current().role}</span>
                </span>
                <span class="mono small" title="Account ID">
                  {current().account.id}
                </span>
                <Show when={current().memberships.length > 1}>
                  <label class="small" for="account-switch">
                    Account
                  </label>
                  <select
                    id="account-switch"
                    value={current().account.id}
                    onChange={(event) => void switchAccount(event.currentTarget.value)}
                  >
                    <For each={current().memberships}>
                      {(membership) => (
                        <option value={membership.accountId}>
                          {membership.accountId} ({membership.role})
                        </option>
                      )}
                    </For>
                  </select>
                </Show>
                <Button variant="ghost" onClick={signOut}>
                  Sign out
                </Button>
              </div>
            </nav>
            <main class="main" id="main" tabindex="-1">
              <Show when={current().account.status === 'suspended'}>
                <Notice tone="warning" title="This account is suspended">
                  {suspensionCause(current().account.suspendedReason)} Requests with its keys are
                  refused. You can still read everything here, revoke keys and write to support.
                </Notice>
              </Show>
              <Show when={current().account.kind === 'accountless'}>
                <p class="small muted">
                  Accountless account: keep your key and dashboard link safe. Without an e-mail
                  address or wallet there is no recovery:{' '}
                  <A href="/dashboard/team">attach one on the Team page</A>.
                </p>
              </Show>
              <Suspense fallback={<Loading />}>{props.children}</Suspense>
            </main>
          </div>
        </SessionContext.Provider>
      )}
    </Show>
  )
}

function SignedOutRedirect(props: { go: () => void }) {
  queueMicrotask(props.go)
  return <Loading label="Taking you to sign in…" />
}

export function shortWallet(address: string | null | undefined): string {
  return address ? `${address.slice(0, 6)}…${address.slice(-4)}` : ''
}

/** Why an account is suspended, in a sentence. */
function suspensionCause(reason: string | null): string {
  switch (reason) {
    case 'chargeback':
      return 'A card payment was disputed.'
    case 'sanctions':
      return 'A wallet address matched the sanctions screening.'
    case 'abuse':
      return 'The acceptable-use policy was breached.'
    case 'operator':
      return 'The operator suspended it.'
    default:
      return ''
  }
}
