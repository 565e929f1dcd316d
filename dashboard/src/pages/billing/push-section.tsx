/** Browser push for credit alerts: subscribe or unsubscribe this browser, with what its permission allows. */
import { revalidate } from '@solidjs/router'
import { createSignal, Show } from 'solid-js'
import type { AlertSettings } from '../../../../shared/schemas/admin/alerts.ts'
import { count } from '../../format.ts'
import { createOptional } from '../../reading.ts'
import { useSubmit } from '../../forms.tsx'
import { Badge, Button, ErrorNotice, announce } from '../../ui.tsx'
import {
  disablePush,
  enablePush,
  getPushSubscription,
  notificationPermission,
  pushSupported,
} from './browser-push.ts'

export function PushSection(props: { settings: AlertSettings; changed: () => void }) {
  const subscription = createOptional(() => getPushSubscription())
  const [permission, setPermission] = createSignal(
    pushSupported() ? notificationPermission() : 'denied',
  )
  const submit = useSubmit()
  const run = async (action: () => Promise<void>, done: string) => {
    const ok = await submit.run(async () => {
      await action()
      return true
    })
    setPermission(notificationPermission())
    void revalidate(getPushSubscription.key)
    if (!ok) return
    announce(done)
    // The settings are read again (the subscription count): this section is drawn anew from them.
    props.changed()
  }
  const subscribers = () => props.settings.pushSubscriptions
  return (
    <section class="stack" aria-labelledby="push-heading">
      <h3 id="push-heading">Browser notifications</h3>
      <p class="small muted">
        {subscribers() === 0
          ? 'No browser is subscribed for this account.'
          : `${count(subscribers())} ${subscribers() === 1 ? 'browser is' : 'browsers are'} subscribed for this account.`}
      </p>
      <Show when={!props.settings.push && subscribers() > 0}>
        <p class="small">
          Browser push is unticked above: subscribed browsers get nothing until it is on.
        </p>
      </Show>
      <Show
        when={pushSupported()}
        fallback={
          <p class="small muted">
            This browser cannot receive push notifications here (it needs a secure https page and
            push support).
          </p>
        }
      >
        <Show when={permission() === 'denied'}>
          <p class="small">
            Notifications are blocked for this site. Allow them in the browser's site settings to
            subscribe.
          </p>
        </Show>
        <Show when={submit.error()}>
          <ErrorNotice error={submit.error()} />
        </Show>
        <Show
          when={subscription.latest()}
          fallback={
            <div class="row">
              <Button
                busy={submit.busy()}
                disabled={permission() === 'denied' || subscription.loading()}
                onClick={() =>
                  void run(enablePush, 'Browser notifications are on for this browser.')
                }
              >
                Enable browser notifications
              </Button>
            </div>
          }
        >
          <div class="row center">
            <span class="small">
              <Badge tone="good">On</Badge> This browser receives credit alerts.
            </span>
            <Button
              variant="ghost"
              busy={submit.busy()}
              onClick={() =>
                void run(disablePush, 'Browser notifications are off for this browser.')
              }
            >
              Turn off for this browser
            </Button>
          </div>
        </Show>
      </Show>
    </section>
  )
}
