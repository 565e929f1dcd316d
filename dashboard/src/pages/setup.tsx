/**
 * Accountless setup, in three steps: 1 the bot check (after saying plainly that such an account has no
 * recovery), 2 the two secrets shown once (the API key and the dashboard link) and the owner's explicit
 * confirmation that both are saved, 3 the top-up step, which the server offers only after that
 * confirmation. The setup answer opens a dashboard-link session, so the dashboard opens right after.
 */
import { A, createAsync, revalidate, useNavigate } from '@solidjs/router'
import { createEffect, createSignal, For, Match, on, onCleanup, Show, Switch } from 'solid-js'
import type { SecretsConfirmed, SetupResult } from '../../../shared/schemas/admin/setup.ts'
import { api } from '../api.ts'
import { forgetReads, getBilling, getTopUp } from '../data.ts'
import { Checkbox, useSubmit } from '../forms.tsx'
import { Button, ErrorNotice, Loaded, Loading, SecretValue } from '../ui.tsx'
import { BotCheck, type BotCheckHandle } from './setup/bot-check.tsx'

type Step = 'check' | 'secrets' | 'top-up'

const STEPS: { id: Step; label: string }[] = [
  { id: 'check', label: 'Check' },
  { id: 'secrets', label: 'Save secrets' },
  { id: 'top-up', label: 'Top up' },
]

export default function Setup() {
  // The account made here is a new session: nothing read before it is shown in its dashboard.
  forgetReads()
  const [step, setStep] = createSignal<Step>('check')
  const [created, setCreated] = createSignal<SetupResult>()
  let heading: HTMLHeadingElement | undefined
  // Each new step takes the focus, so keyboard and screen-reader users start reading it from the top.
  createEffect(on(step, () => heading?.focus(), { defer: true }))

  return (
    <main class="public public-wide" id="main">
      <div class="brand">
        <span class="brand-mark" aria-hidden="true" />
        Model Gateway
      </div>
      <section class="card" aria-labelledby="setup-title">
        <h1 id="setup-title">Create an accountless account</h1>
        <ol class="steps" aria-label="Setup steps">
          <For each={STEPS}>
            {(entry, index) => (
              <li
                aria-current={step() === entry.id ? 'step' : undefined}
                classList={{ done: index() < STEPS.findIndex((s) => s.id === step()) }}
              >
                <span class="step-number" aria-hidden="true">
                  {index() + 1}
                </span>
                <span class="visually-hidden">Step {index() + 1}: </span>
                {entry.label}
              </li>
            )}
          </For>
        </ol>
        <Switch>
          <Match when={step() === 'check'}>
            <CheckStep
              headingRef={(element) => (heading = element)}
              onCreated={(result) => {
                setCreated(result)
                setStep('secrets')
              }}
            />
          </Match>
          <Match when={step() === 'secrets' && created()}>
            {(result) => (
              <SecretsStep
                headingRef={(element) => (heading = element)}
                result={result()}
                onConfirmed={() => setStep('top-up')}
              />
            )}
          </Match>
          <Match when={step() === 'top-up'}>
            <TopUpStep headingRef={(element) => (heading = element)} />
          </Match>
        </Switch>
      </section>
      <Show when={step() === 'check'}>
        <p class="muted">
          Have an e-mail address or a wallet? <A href="/sign-in">Sign in with it instead</A>: such
          an account can always be recovered.
        </p>
      </Show>
    </main>
  )
}

type StepProps = { headingRef: (element: HTMLHeadingElement) => void }

function CheckStep(props: StepProps & { onCreated: (result: SetupResult) => void }) {
  const submit = useSubmit()
  let botCheck: BotCheckHandle | undefined
  const create = async (payload: string) => {
    const result = await submit.run(() => api<SetupResult>('POST', '/setup', { altcha: payload }))
    if (result) props.onCreated(result)
    // A refused solution cannot be used again: the widget starts over with a new challenge.
    else botCheck?.reset()
  }
  return (
    <div class="stack setup-step">
      <h2 ref={props.headingRef} tabindex="-1">
        Before you start
      </h2>
      <p>
        An accountless account needs no e-mail address, password or wallet. You get two secrets,
        shown once: an <strong>API key</strong> for requests and a <strong>dashboard link</strong>{' '}
        that opens this dashboard from any browser.
      </p>
      <div class="notice warning">
        <strong>There is no recovery</strong>
        <p>
          If you lose both the API key and the dashboard link, nobody, not even support, can recover
          the account or its balance. Keep them in a password manager. You can attach an e-mail
          address or a wallet later to get recovery.
        </p>
      </div>
      <p class="muted small">
        Nothing is created until you pass the check below. Your browser solves a small puzzle (a few
        seconds of computation) to show it is not a bot; no personal data is collected.
      </p>
      <BotCheck
        onSolved={(payload) => void create(payload)}
        ref={(handle) => (botCheck = handle)}
      />
      <Show when={submit.busy()}>
        <Loading label="Creating your account…" />
      </Show>
      <Show when={submit.error()}>
        <ErrorNotice error={submit.error()} />
      </Show>
    </div>
  )
}

function SecretsStep(props: StepProps & { result: SetupResult; onConfirmed: () => void }) {
  const [keySaved, setKeySaved] = createSignal(false)
  const [linkSaved, setLinkSaved] = createSignal(false)
  const submit = useSubmit()
  // The secrets exist only on this page: leaving before confirming asks first.
  const guard = (event: BeforeUnloadEvent) => event.preventDefault()
  window.addEventListener('beforeunload', guard)
  onCleanup(() => window.removeEventListener('beforeunload', guard))

  const confirm = async (event: SubmitEvent) => {
    event.preventDefault()
    const done = await submit.run(() =>
      api<SecretsConfirmed>('POST', '/setup/confirm', { keySaved: true, linkSaved: true }),
    )
    if (done) props.onConfirmed()
  }
  return (
    <form class="stack setup-step" onSubmit={confirm}>
      <h2 ref={props.headingRef} tabindex="-1">
        Save both secrets now
      </h2>
      <p>
        Account <span class="mono">{props.result.accountId}</span> is ready. These secrets are shown
        only this once.
      </p>
      <SecretValue
        label="API key"
        value={props.result.key}
        hint={
          <>
            Send it as <code>Authorization: Bearer …</code> with every API request.
          </>
        }
      />
      <SecretValue
        label="Dashboard link"
        value={props.result.dashboardLink}
        hint="Open it to sign in to this dashboard. It keeps working when you rotate keys."
      />
      <div class="notice warning" role="note">
        <strong>Without these there is no way back in</strong>
        <p>{props.result.warning}</p>
      </div>
      <fieldset class="stack plain">
        <legend>Confirm before you continue</legend>
        <Checkbox label="I saved the API key" checked={keySaved()} onChange={setKeySaved} />
        <Checkbox
          label="I saved the dashboard link"
          checked={linkSaved()}
          onChange={setLinkSaved}
        />
      </fieldset>
      <Show when={submit.error()}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <div class="row">
        <Button
          type="submit"
          variant="primary"
          busy={submit.busy()}
          disabled={!keySaved() || !linkSaved()}
        >
          I saved both
        </Button>
        <Show when={!keySaved() || !linkSaved()}>
          <span class="small muted">Tick both boxes to continue.</span>
        </Show>
      </div>
    </form>
  )
}

function TopUpStep(props: StepProps) {
  const navigate = useNavigate()
  // A server that takes cards tops up on the billing page; elsewhere the step says whom to ask.
  const topUp = createAsync(async () =>
    (await getBilling()).topUp.card ? ('card' as const) : await getTopUp(),
  )
  return (
    <div class="stack setup-step">
      <h2 ref={props.headingRef} tabindex="-1">
        Add credit
      </h2>
      <p>
        The account starts with no credit: requests to paid models are refused with <code>402</code>{' '}
        until it has some. Free models (each account has a daily allowance of free requests) and the
        playground's free messages work right away.
      </p>
      <Loaded data={topUp} retry={() => revalidate(getTopUp.key)}>
        {(answer) => (
          <div class="notice info">
            <strong>How to top up</strong>
            <p>
              {answer !== 'card' && answer.method === 'operator'
                ? answer.instructions
                : 'Pay by card on the billing page of the dashboard.'}
            </p>
          </div>
        )}
      </Loaded>
      <div class="row">
        <Button variant="primary" onClick={() => navigate('/dashboard')}>
          Open dashboard
        </Button>
      </div>
    </div>
  )
}
