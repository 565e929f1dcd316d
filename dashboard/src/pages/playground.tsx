/**
 * The playground: chat with a model from the dashboard. The account's free trial messages come first;
 * paid chat (charged to the balance like an API request) is only ever the user's explicit choice, never
 * a fallback. Answers stream in as they are written, each with its cost.
 */
import { A, revalidate } from '@solidjs/router'
import { createSignal, createUniqueId, Show } from 'solid-js'
import type { TrialStatus } from '../../../shared/schemas/admin/playground.ts'
import { ApiError } from '../api.ts'
import { getBilling, getTrial } from '../data.ts'
import { usd } from '../format.ts'
import { createOptional } from '../reading.ts'
import { useAbilities } from '../session.tsx'
import { Field } from '../forms.tsx'
import { announce, Button, Card, ErrorNotice, Notice, Page } from '../ui.tsx'
import { ChatLog, costText } from './playground/chat-log.tsx'
import { createConversation } from './playground/conversation.ts'
import { PaidModelPicker } from './playground/model-picker.tsx'

type Mode = 'free' | 'paid'

export default function Playground() {
  const can = useAbilities()
  // The free message count and the balance say what a message costs; the chat works without them.
  const trial = createOptional(() => getTrial())
  const [mode, setMode] = createSignal<Mode>('free')
  const [model, setModel] = createSignal('')
  const billing = createOptional(() =>
    mode() === 'paid' ? getBilling() : Promise.resolve(undefined),
  )
  const [draft, setDraft] = createSignal('')
  const [system, setSystem] = createSignal('')
  const chat = createConversation()

  const refusalCode = () => {
    const refusal = chat.refusal()
    return refusal instanceof ApiError ? refusal : undefined
  }
  const freeUsedUp = () =>
    trial.latest()?.remaining === 0 || refusalCode()?.code === 'trial_exhausted'
  // The server's "cannot serve now" refusals of free chat are 5xx; it never substitutes a paid request.
  const freeUnavailable = () => {
    const refusal = refusalCode()
    return mode() === 'free' && !!refusal && refusal.status >= 500
  }
  const blocked = (): string | undefined => {
    if (!can().chat) return 'The playground is unavailable while the account is suspended.'
    if (mode() === 'free' && trial.latest()?.remaining === 0)
      return 'No free messages are left: choose paid chat to continue.'
    if (mode() === 'paid' && !model()) return 'Choose a model for paid chat.'
    return undefined
  }

  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const text = draft().trim()
    if (!text || chat.busy() || blocked()) return
    const paid = mode() === 'paid'
    setDraft('')
    const result = await chat.send({ text, paid, model: paid ? model() : null, system: system() })
    if (result.kind === 'refused' || result.kind === 'stopped') {
      // Nothing was answered: the message goes back to the box unless something new was typed meanwhile.
      if (!draft()) setDraft(text)
    }
    if (result.kind === 'answered') {
      const failed = result.end.failure
      announce(
        failed
          ? `The answer failed: ${failed.message}`
          : `Answer complete, ${costText(result.end.cost)}.`,
      )
    }
    void revalidate(paid ? getBilling.key : getTrial.key)
  }

  return (
    <Page
      title="Playground"
      description="Try models from the browser. Free messages come first; paid chat is charged to the account's balance and only used when you choose it."
    >
      <Card title="How to chat">
        <ModeChooser
          mode={mode()}
          onMode={setMode}
          trial={trial.latest()}
          trialError={trial.error()}
          retryTrial={() => void revalidate(getTrial.key)}
        />
        <Show when={mode() === 'free' && freeUsedUp()}>
          <Notice title="Your free messages are used up">
            <p>
              To keep chatting, choose <strong>Paid chat</strong> above: each answer is then charged
              to the account's balance. Nothing is charged until you choose it.
            </p>
          </Notice>
        </Show>
        <Show when={mode() === 'paid'}>
          <div class="stack">
            <PaidModelPicker value={model()} onValue={setModel} />
            <p class="small muted">
              <Show
                when={billing.latest()}
                fallback={
                  billing.error() ? 'The balance could not be loaded.' : 'Loading the balance…'
                }
              >
                {(money) => <>Available balance: {usd(money().availableUsd)}. </>}
              </Show>
              <A href="/dashboard/billing">Billing and top-up</A>
            </p>
            <p class="small muted">
              Paid chat uses the account's key named Playground, made with the first paid message;
              its limits show on the <A href="/dashboard/keys">Keys</A> page and its spending on the{' '}
              <A href="/dashboard/usage">Usage</A> page.
            </p>
          </div>
        </Show>
      </Card>

      <Card title="Conversation" class="chat-card">
        <ChatLog
          turns={chat.turns}
          freeModel={mode() === 'free' ? trial.latest()?.model : undefined}
        />
        {/* Free chat's "cannot serve now" refusals already say that nothing paid was sent and what to do. */}
        <Show when={chat.refusal()}>
          <Show when={freeUnavailable()} fallback={<ErrorNotice error={chat.refusal()} />}>
            <Notice title="Free chat cannot answer right now">
              <p>{refusalCode()?.message}</p>
            </Notice>
          </Show>
        </Show>
        <Composer
          draft={draft()}
          onDraft={setDraft}
          system={system()}
          onSystem={setSystem}
          busy={chat.busy()}
          blocked={blocked()}
          canClear={chat.turns.length > 0}
          onSubmit={submit}
          onStop={chat.stop}
          onClear={chat.clear}
        />
      </Card>
    </Page>
  )
}

function trialText(trial: TrialStatus): string {
  if (trial.limit === 0) return 'This service offers no free messages.'
  if (!trial.available) return 'Free chat is not available on this service: it has no free model.'
  return `${trial.remaining} of ${trial.limit} free messages left`
}

function ModeChooser(props: {
  mode: Mode
  onMode: (mode: Mode) => void
  trial: TrialStatus | undefined
  trialError: unknown
  retryTrial: () => void
}) {
  const id = createUniqueId()
  return (
    <fieldset class="mode-chooser">
      <legend class="visually-hidden">Chat mode</legend>
      <div class="choice">
        <input
          type="radio"
          id={`${id}-free`}
          name="chat-mode"
          value="free"
          checked={props.mode === 'free'}
          onChange={() => props.onMode('free')}
          aria-describedby={`${id}-free-hint`}
        />
        <label for={`${id}-free`}>Free chat</label>
        <p class="hint" id={`${id}-free-hint`}>
          <Show
            when={props.trial}
            fallback={
              props.trialError
                ? 'The free message count could not be loaded.'
                : 'Loading free messages…'
            }
          >
            {(trial) => (
              <>
                <span class="trial-count">{trialText(trial())}</span>
                <Show when={trial().limit > 0 && trial().available}>
                  {' '}
                  · answered by {trial().model}, never charged
                </Show>
              </>
            )}
          </Show>
        </p>
      </div>
      <div class="choice">
        <input
          type="radio"
          id={`${id}-paid`}
          name="chat-mode"
          value="paid"
          checked={props.mode === 'paid'}
          onChange={() => props.onMode('paid')}
          aria-describedby={`${id}-paid-hint`}
        />
        <label for={`${id}-paid`}>Paid chat (charged to your balance)</label>
        <p class="hint" id={`${id}-paid-hint`}>
          Any model, at its price per token, like an API request.
        </p>
      </div>
      <Show when={props.trialError}>
        <ErrorNotice error={props.trialError} retry={props.retryTrial} />
      </Show>
    </fieldset>
  )
}

function Composer(props: {
  draft: string
  onDraft: (text: string) => void
  system: string
  onSystem: (text: string) => void
  busy: boolean
  blocked: string | undefined
  canClear: boolean
  onSubmit: (event: SubmitEvent) => void
  onStop: () => void
  onClear: () => void
}) {
  let form: HTMLFormElement | undefined
  return (
    <form class="composer stack" ref={form} onSubmit={props.onSubmit}>
      <details class="system-prompt">
        <summary>System prompt</summary>
        <Field label="System prompt" hint="Sent first with every message of this conversation.">
          {(id, describedBy) => (
            <textarea
              id={id}
              aria-describedby={describedBy()}
              rows={2}
              value={props.system}
              onInput={(event) => props.onSystem(event.currentTarget.value)}
            />
          )}
        </Field>
      </details>
      <Field label="Message" hint="Enter sends; Shift+Enter starts a new line.">
        {(id, describedBy) => (
          <textarea
            id={id}
            name="message"
            rows={3}
            aria-describedby={describedBy()}
            value={props.draft}
            onInput={(event) => props.onDraft(event.currentTarget.value)}
            onKeyDown={(event) => {
              if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return
              event.preventDefault()
              if (!props.busy) form?.requestSubmit()
            }}
          />
        )}
      </Field>
      <div class="row composer-actions">
        <Button
          type="submit"
          variant="primary"
          busy={props.busy}
          disabled={!!props.blocked || !props.draft.trim()}
        >
          Send
        </Button>
        <Show when={props.busy}>
          <Button onClick={() => props.onStop()}>Stop</Button>
        </Show>
        <Button
          variant="ghost"
          disabled={props.busy || !props.canClear}
          onClick={() => props.onClear()}
        >
          Clear conversation
        </Button>
        <Show when={props.blocked}>
          <span class="small muted">{props.blocked}</span>
        </Show>
        <Show when={props.busy}>
          <span class="small muted" role="status">
            Answering… the next message can be sent when this answer is finished.
          </span>
        </Show>
      </div>
    </form>
  )
}
