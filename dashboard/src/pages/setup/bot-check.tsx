/**
 * The proof-of-work bot check of accountless setup: the `altcha` widget, solving the challenge that
 * GET /admin/v1/setup/challenge issues (PBKDF2/SHA-256, HMAC-signed by the site server). Imported only by
 * the setup page, so the widget stays in that page's chunk.
 *
 * The widget is the `external` build: its proof-of-work worker is a file Vite emits next to the chunk
 * (served by the site server like any dashboard file) rather than a blob: worker built from an inline
 * string, and its styles are a stylesheet rather than injected at run time.
 */
import 'altcha/external'
import 'altcha/altcha.css'
import Pbkdf2Worker from 'altcha/workers/pbkdf2?worker'
import { onCleanup, onMount } from 'solid-js'

// The server issues PBKDF2/SHA-256; the other PBKDF2 variants use the same worker.
for (const algorithm of ['PBKDF2/SHA-256', 'PBKDF2/SHA-384', 'PBKDF2/SHA-512']) {
  if (!$altcha.algorithms.has(algorithm))
    $altcha.algorithms.set(algorithm, () => new Pbkdf2Worker())
}

export const CHALLENGE_URL = '/admin/v1/setup/challenge'

export type BotCheckHandle = { reset(): void }

/**
 * The widget, created by hand: it is configured through its own attributes and events, which Solid would
 * otherwise set as properties. `onSolved` receives the payload the server expects in the `altcha` field
 * (base64 JSON of the challenge and its solution).
 */
export function BotCheck(props: {
  onSolved: (payload: string) => void
  ref?: (handle: BotCheckHandle) => void
}) {
  let host!: HTMLDivElement
  onMount(() => {
    const widget = document.createElement('altcha-widget')
    widget.setAttribute('challenge', CHALLENGE_URL)
    widget.setAttribute('name', 'altcha')
    widget.setAttribute('auto', 'off')
    // The server never asks for the human-interaction signature: collect no pointer or scroll data.
    widget.setAttribute('configuration', JSON.stringify({ humanInteractionSignature: false }))
    const solved = (event: Event) => {
      const payload = (event as CustomEvent<{ payload?: string }>).detail?.payload
      if (payload) props.onSolved(payload)
    }
    widget.addEventListener('verified', solved)
    host.append(widget)
    props.ref?.({ reset: () => widget.reset() })
    onCleanup(() => {
      widget.removeEventListener('verified', solved)
      widget.remove()
    })
  })
  return <div class="bot-check" ref={host} />
}
