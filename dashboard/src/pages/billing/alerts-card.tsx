/**
 * Credit alerts: a threshold in USD and the channels (e-mail to the owner and admins, browser push to
 * every subscribed browser). Each alert is sent once when the available balance falls below the
 * threshold and re-arms when a credit lifts it back. Owners and admins change the settings; any member
 * may subscribe their own browser. Accountless accounts have nobody to tell until they are claimed.
 */
import { A, createAsync, revalidate } from '@solidjs/router'
import { createSignal, For, Show } from 'solid-js'
import type {
  AlertChanges,
  AlertDelivery,
  AlertSettings,
} from '../../../../shared/schemas/admin/alerts.ts'
import { api } from '../../api.ts'
import { getAlerts } from '../../data.ts'
import { usd } from '../../format.ts'
import { useAbilities } from '../../session.tsx'
import { Checkbox, TextField, fieldError, useSubmit } from '../../forms.tsx'
import { Badge, Button, Card, ErrorNotice, Loaded, Notice, announce } from '../../ui.tsx'
import { PushSection } from './push-section.tsx'

/** After a change the settings are read again, and the card is drawn anew from them. */
const rereadSettings = () => revalidate(getAlerts.key)

export function AlertsCard() {
  const settings = createAsync(() => getAlerts())
  return (
    <Card title="Credit alerts" class="alerts">
      <Loaded data={settings} retry={rereadSettings}>
        {(current) => (
          <Show
            when={current.eligible}
            fallback={
              <Notice title="Alerts need an e-mail address or a wallet">
                This account has no identity, so there is nobody to tell. Claim it first with your
                e-mail address or a wallet: <A href="/dashboard/team">the Team page</A> shows the
                request to send with one of its keys. Alerts can be set up here afterwards.
              </Notice>
            }
          >
            <div class="stack">
              <AlertStatus settings={current} />
              <Show when={current.mailDelivery === 'file'}>
                <Notice tone="warning" title="This server sends no e-mail">
                  It has no mail server configured, so e-mail alerts are written to a file on the
                  server instead of being sent. Use browser push, or ask the operator to set up
                  mail.
                </Notice>
              </Show>
              <AlertForm settings={current} saved={() => void rereadSettings()} />
              <PushSection settings={current} changed={() => void rereadSettings()} />
              <Deliveries deliveries={current.deliveries} />
            </div>
          </Show>
        )}
      </Loaded>
    </Card>
  )
}

function AlertStatus(props: { settings: AlertSettings }) {
  return (
    <Show when={props.settings.thresholdUsd} fallback={<p class="muted">Off: no alert is set.</p>}>
      {(threshold) => (
        <p>
          <Show
            when={props.settings.armed}
            fallback={
              <>
                <Badge tone="warn">Not armed</Badge> The available balance is below{' '}
                {usd(threshold())} (the alert was sent, or the balance was already below it when it
                was set). It arms again when a credit brings the balance back to {usd(threshold())}.
              </>
            }
          >
            <Badge tone="good">Armed</Badge> You are told once when the available balance falls
            below {usd(threshold())}.
          </Show>
        </p>
      )}
    </Show>
  )
}

function AlertForm(props: { settings: AlertSettings; saved: () => void }) {
  const can = useAbilities()
  const [threshold, setThreshold] = createSignal(props.settings.thresholdUsd ?? '')
  const [email, setEmail] = createSignal(props.settings.email)
  const [push, setPush] = createSignal(props.settings.push)
  const submit = useSubmit()
  const save = async (changes: AlertChanges, done: string) => {
    const next = await submit.run(() => api<AlertSettings>('PUT', '/alerts', changes))
    if (!next) return
    props.saved()
    announce(done)
  }
  const onSubmit = (event: SubmitEvent) => {
    event.preventDefault()
    const amount = threshold().trim().replace(/^\$/, '')
    void save(
      { thresholdUsd: amount === '' ? null : amount, email: email(), push: push() },
      amount === '' ? 'Credit alert turned off.' : 'Credit alert saved.',
    )
  }
  const locked = () => !can().manage
  return (
    <form class="stack narrow" onSubmit={onSubmit} aria-label="Credit alert settings">
      <Show when={locked()}>
        <p class="small muted">
          <Badge>Owner and admins</Badge> Only the account's owner and admins can change the alert.
        </p>
      </Show>
      <TextField
        label="Alert threshold (USD)"
        name="threshold"
        inputmode="decimal"
        autocomplete="off"
        placeholder="5.00"
        value={threshold()}
        onValue={setThreshold}
        disabled={locked()}
        hint="Leave empty for no alert."
        error={fieldError(submit.error(), 'thresholdUsd')}
      />
      <fieldset class="plain">
        <legend>Send the alert by</legend>
        <Checkbox
          label="E-mail"
          hint="to the owner and admins"
          checked={email()}
          onChange={setEmail}
          disabled={locked()}
        />
        <Checkbox
          label="Browser push"
          hint="to every browser subscribed below"
          checked={push()}
          onChange={setPush}
          disabled={locked()}
        />
      </fieldset>
      <Show when={submit.error() && !fieldError(submit.error(), 'thresholdUsd')}>
        <ErrorNotice error={submit.error()} />
      </Show>
      <div class="row">
        <Button type="submit" variant="primary" busy={submit.busy()} disabled={locked()}>
          Save alert
        </Button>
        <Show when={props.settings.thresholdUsd}>
          <Button
            disabled={locked() || submit.busy()}
            onClick={() =>
              void save(
                { thresholdUsd: null, email: email(), push: push() },
                'Credit alert turned off.',
              )
            }
          >
            Turn off
          </Button>
        </Show>
      </div>
    </form>
  )
}

const DELIVERY_STATES = {
  sent: ['good', 'Sent'],
  pending: ['warn', 'Trying again'],
  failed: ['bad', 'Failed'],
} as const

/** The latest alert messages: sent, still being tried after a failure, or given up on. */
function Deliveries(props: { deliveries: AlertDelivery[] }) {
  return (
    <Show when={props.deliveries.length > 0}>
      <div class="table-wrap">
        <table aria-label="Latest alert messages">
          <thead>
            <tr>
              <th scope="col">Sent to</th>
              <th scope="col">When</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            <For each={props.deliveries}>
              {(delivery) => (
                <tr>
                  <td>
                    {delivery.channel === 'email' ? 'E-mail' : 'Push'}:{' '}
                    <span class="mono">{delivery.to}</span>
                  </td>
                  <td>
                    <time datetime={delivery.sentAt ?? delivery.createdAt}>
                      {new Date(delivery.sentAt ?? delivery.createdAt).toLocaleString()}
                    </time>
                  </td>
                  <td>
                    <Badge tone={DELIVERY_STATES[delivery.state][0]}>
                      {DELIVERY_STATES[delivery.state][1]}
                    </Badge>
                    <Show when={delivery.state !== 'sent' && delivery.lastError}>
                      <div class="small muted">
                        {delivery.attempts === 1 ? '1 attempt' : `${delivery.attempts} attempts`}:{' '}
                        {delivery.lastError}
                      </div>
                    </Show>
                  </td>
                </tr>
              )}
            </For>
          </tbody>
        </table>
      </div>
    </Show>
  )
}
