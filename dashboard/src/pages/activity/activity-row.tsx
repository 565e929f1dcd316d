/** One request of the activity list: when, its ID (to copy or quote to support), key, model, tokens, charge, status. */
import { A } from '@solidjs/router'
import { Show } from 'solid-js'
import { errorWords } from '../../../../shared/error-words.ts'
import type { ErrorCode } from '../../../../shared/errors.ts'
import type { ApiKey } from '../../../../shared/schemas/admin/keys.ts'
import type { ActivityItem } from '../../../../shared/schemas/admin/usage.ts'
import { count, usd } from '../../format.ts'
import { Badge, CopyButton } from '../../ui.tsx'

export function ActivityRow(props: { item: ActivityItem; apiKey: ApiKey | undefined }) {
  const item = () => props.item
  const failed = () => item().status >= 400
  const served = () => item().servedModel ?? item().model ?? '—'
  return (
    <tr>
      <td data-label="Time">
        {/* The time goes under the date where the column is narrow, so the list fits beside the navigation. */}
        <time datetime={item().time} title={item().time}>
          <span class="nowrap">
            {new Date(item().time).toLocaleDateString(undefined, { dateStyle: 'medium' })},
          </span>{' '}
          <span class="nowrap">
            {new Date(item().time).toLocaleTimeString(undefined, { timeStyle: 'medium' })}
          </span>
        </time>
        <div class="small muted">
          {item().apiStyle}
          {item().stream ? ', stream' : ''}, {formatLatency(item().latencyMs)}
        </div>
      </td>
      <td data-label="Request ID">
        <div class="request-id">
          <code class="mono">{item().requestId}</code>
          <div class="row tight">
            <CopyButton
              text={item().requestId}
              label={`Copy request ID ${item().requestId}`}
              variant="ghost"
            />
            <A
              class="small"
              href={`/dashboard/support?requestId=${encodeURIComponent(item().requestId)}`}
              aria-label={`Ask support about ${item().requestId}`}
            >
              Ask support
            </A>
          </div>
        </div>
      </td>
      <td class="break" data-label="Key">
        <Show when={props.apiKey} fallback={<span class="mono small">{item().keyId}</span>}>
          {(key) => (
            <>
              {key().name || 'Unnamed key'}
              <div class="mono small muted">{key().prefix}…</div>
            </>
          )}
        </Show>
      </td>
      <td class="break" data-label="Model">
        <span class="mono">{served()}</span>
        <Show when={item().model && item().servedModel && item().model !== item().servedModel}>
          <div class="small muted">asked as {item().model}</div>
        </Show>
      </td>
      <td data-label="Provider">{item().provider ?? '—'}</td>
      <td class="num nowrap" data-label="Tokens in / out">
        {count(item().inputTokens)} / {count(item().outputTokens)}
      </td>
      <td class="num nowrap" data-label="Cost">
        {usd(item().chargedUsd)}
        <Show when={item().costNano !== item().chargedNano}>
          <div class="small muted" title="The part of the cost not charged was written off">
            of {usd(item().costUsd)}
          </div>
        </Show>
      </td>
      <td data-label="Status">
        <Badge tone={failed() ? 'bad' : 'good'}>{item().status}</Badge>
        <Show when={item().errorCode}>
          {(code) => (
            <div class="small mono break" title={errorWords[code() as ErrorCode] ?? code()}>
              {code()}
            </div>
          )}
        </Show>
        <Show when={item().guardrailRedactions}>
          {(redactions) => (
            <div
              class="small muted"
              title="What the key's guardrail replaced before the model read the request (never the text itself)"
            >
              Redacted: <span class="mono">{redactions()}</span>
            </div>
          )}
        </Show>
      </td>
    </tr>
  )
}

function formatLatency(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
}
