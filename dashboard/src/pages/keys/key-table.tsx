/**
 * The account's keys as a table: name and prefix, status (with the end of a rotation grace), limits,
 * models, guardrail, last use, and the row's actions; where the table is narrow, each key a card with its
 * actions in view. Never a secret: the list has none.
 */
import { A } from '@solidjs/router'
import { For, Match, Show, Switch } from 'solid-js'
import type { ApiKey } from '../../../../shared/schemas/admin/keys.ts'
import type { Guardrail } from '../../../../shared/schemas/admin/policy.ts'
import { count, dateTime, relative, usd } from '../../format.ts'
import { ConfirmButton } from '../../dialogs.tsx'
import { Badge, Button } from '../../ui.tsx'
import { ModelList } from '../policy/model-list.tsx'
import { OWNER_OR_ADMIN, useManageBlock } from '../policy/read-only.tsx'

type Props = {
  keys: readonly ApiKey[]
  guardrails: readonly Guardrail[] | undefined
  canManage: boolean
  /** Revoking stays possible while the account is suspended (it only takes access away). */
  canRevoke: boolean
  onEdit: (key: ApiKey) => void
  onRotate: (key: ApiKey) => Promise<unknown>
  onRevoke: (key: ApiKey) => Promise<unknown>
}

/** What a key is called in buttons and dialogs (a key may have no name). */
export const keyLabel = (key: ApiKey) => key.name || key.prefix

export function KeyTable(props: Props) {
  const blocked = useManageBlock()
  const usable = () =>
    props.keys.filter((key) => key.status === 'active' || key.status === 'in_grace').length
  return (
    <div class="table-wrap">
      <table class="policy-table narrow-cards">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Limits</th>
            <th scope="col">Models</th>
            <th scope="col">Guardrail</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <For each={props.keys}>
            {(key) => (
              <tr>
                <th scope="row">
                  <div class="key-name">
                    <span>{key.name || <span class="muted">Unnamed key</span>}</span>
                    <code class="small muted">{key.prefix}…</code>
                  </div>
                </th>
                <td data-label="Status">
                  <KeyStatusCell
                    apiKey={key}
                    replacement={props.keys.find((other) => other.id === key.replacedBy)}
                  />
                </td>
                <td class="small" data-label="Limits">
                  <KeyLimits apiKey={key} />
                </td>
                <td class="small" data-label="Models">
                  <ModelList models={key.allowedModels} />
                </td>
                <td class="small" data-label="Guardrail">
                  <Show when={key.guardrailId} fallback={<span class="muted">None</span>}>
                    {(id) => (
                      <A href="/dashboard/guardrails">
                        {props.guardrails?.find((guardrail) => guardrail.id === id())?.name ?? id()}
                      </A>
                    )}
                  </Show>
                </td>
                <td class="small" data-label="Last used">
                  <Show when={key.lastUsedAt} fallback={<span class="muted">Never</span>}>
                    {(at) => (
                      <time datetime={at()} title={dateTime(at())}>
                        {relative(at())}
                      </time>
                    )}
                  </Show>
                </td>
                <td>
                  <Show when={key.status === 'active' || key.status === 'in_grace'}>
                    <div class="row-actions">
                      <Button
                        variant="secondary"
                        aria-label={`Edit ${keyLabel(key)}`}
                        disabled={!props.canManage}
                        title={blocked()}
                        onClick={() => props.onEdit(key)}
                      >
                        Edit
                      </Button>
                      <Show when={key.status === 'active'}>
                        <ConfirmButton
                          label="Rotate"
                          ariaLabel={`Rotate ${keyLabel(key)}`}
                          variant="secondary"
                          title={`Rotate ${keyLabel(key)}?`}
                          confirmLabel="Rotate key"
                          disabled={!props.canManage}
                          disabledTitle={blocked()}
                          onConfirm={() => props.onRotate(key)}
                        >
                          <p>
                            A new key with the same name, limits, models and guardrail is created
                            and shown once. The current key <code>{key.prefix}…</code> keeps working
                            for 24 hours so you can update your clients, then stops.
                          </p>
                          <p class="small muted">
                            To stop the current key at once instead, revoke it after rotating.
                          </p>
                        </ConfirmButton>
                      </Show>
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke ${keyLabel(key)}`}
                        title={`Revoke ${keyLabel(key)}?`}
                        confirmLabel="Revoke key"
                        disabled={!props.canRevoke}
                        disabledTitle={OWNER_OR_ADMIN}
                        onConfirm={() => props.onRevoke(key)}
                      >
                        <p>
                          Requests with <code>{key.prefix}…</code> are refused at once, on every
                          server. This cannot be undone.
                        </p>
                        <Show when={key.status === 'in_grace'}>
                          <p>
                            It is in its rotation grace: revoking ends the grace now. Its
                            replacement keeps working.
                          </p>
                        </Show>
                        <Show when={usable() === 1}>
                          <p>
                            <strong>This is the account's last working key.</strong> Create a new
                            key before revoking it if clients still need access.
                          </p>
                        </Show>
                      </ConfirmButton>
                    </div>
                  </Show>
                </td>
              </tr>
            )}
          </For>
        </tbody>
      </table>
    </div>
  )
}

function KeyStatusCell(props: { apiKey: ApiKey; replacement: ApiKey | undefined }) {
  return (
    <div class="status-cell">
      <Switch>
        <Match when={props.apiKey.status === 'active'}>
          <Badge tone="good">Active</Badge>
        </Match>
        <Match when={props.apiKey.status === 'in_grace'}>
          <Badge tone="warn">In grace</Badge>
          <span class="small">
            until <time datetime={props.apiKey.expiresAt!}>{dateTime(props.apiKey.expiresAt)}</time>{' '}
            ({relative(props.apiKey.expiresAt)})
          </span>
        </Match>
        <Match when={props.apiKey.status === 'expired'}>
          <Badge tone="neutral">Expired</Badge>
          <span class="small muted">
            <time datetime={props.apiKey.expiresAt!}>{dateTime(props.apiKey.expiresAt)}</time>
          </span>
        </Match>
        <Match when={props.apiKey.status === 'revoked'}>
          <Badge tone="bad">Revoked</Badge>
          <span class="small muted">
            <time datetime={props.apiKey.revokedAt ?? ''}>{dateTime(props.apiKey.revokedAt)}</time>
          </span>
        </Match>
      </Switch>
      <Show when={props.replacement}>
        {(replacement) => (
          <span class="small muted">
            Replaced by <code>{replacement().prefix}…</code>
          </span>
        )}
      </Show>
    </div>
  )
}

function KeyLimits(props: { apiKey: ApiKey }) {
  const key = () => props.apiKey
  const rates = () =>
    [
      key().rpmLimit !== null ? `${count(key().rpmLimit!)} requests/min` : '',
      key().tpmLimit !== null ? `${count(key().tpmLimit!)} tokens/min` : '',
      key().concurrency !== null ? `${count(key().concurrency!)} at once` : '',
    ].filter(Boolean)
  /** A cap with what counts against it now, when the list says (UTC day and month). */
  const cap = (
    limitUsd: string | null,
    usedUsd: string | undefined,
    period: string,
    per: string,
  ) =>
    limitUsd === null
      ? ''
      : usedUsd === undefined
        ? `${usd(limitUsd)} a ${per}`
        : `${usd(usedUsd)} of ${usd(limitUsd)} ${period}`
  const caps = () =>
    [
      cap(key().dailyLimitUsd, key().spend?.todayUsd, 'today', 'day'),
      cap(key().monthlyLimitUsd, key().spend?.monthUsd, 'this month', 'month'),
    ].filter(Boolean)
  const reached = () => {
    const { spend, dailyLimitNano, monthlyLimitNano } = key()
    if (!spend) return undefined
    if (dailyLimitNano !== null && spend.todayNano >= dailyLimitNano) return 'Daily cap reached'
    if (monthlyLimitNano !== null && spend.monthNano >= monthlyLimitNano)
      return 'Monthly cap reached'
    return undefined
  }
  return (
    <div class="status-cell">
      <span>
        {rates().length > 0 ? rates().join(' · ') : <span class="muted">No rate limits</span>}
      </span>
      <span>
        {caps().length > 0 ? caps().join(' · ') : <span class="muted">No spend caps</span>}
      </span>
      <Show when={reached()}>{(what) => <Badge tone="warn">{what()}</Badge>}</Show>
      <Show when={key().spend && key().spend!.heldNano > 0}>
        <span class="muted">Includes {usd(key().spend!.heldUsd)} held by requests in progress</span>
      </Show>
      <Show when={caps().length === 0 && key().spend}>
        {(spend) => (
          <span class="muted">
            Spent {usd(spend().todayUsd)} today, {usd(spend().monthUsd)} this month (UTC)
          </span>
        )}
      </Show>
    </div>
  )
}
