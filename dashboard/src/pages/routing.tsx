/**
 * Routing restrictions: the models every key of the account may call and the providers that may serve
 * them, account-wide. An empty list is no restriction (saved as null); "Remove restrictions" clears both.
 * Below, the account-level rate and concurrency limits its keys share.
 */
import { createAsync, revalidate } from '@solidjs/router'
import { createMemo, createSignal, For, Show } from 'solid-js'
import type {
  Routing as RoutingView,
  RoutingProviders,
} from '../../../shared/schemas/admin/policy.ts'
import { ALLOWLIST_LABELS } from '../../../shared/schemas/admin/field-rules.ts'
import { api, ApiError } from '../api.ts'
import { getRouting, getRoutingProviders } from '../data.ts'
import { ModelPicker, MultiSelect } from '../model-picker.tsx'
import { createOptional } from '../reading.ts'
import { useAbilities } from '../session.tsx'
import { ConfirmButton } from '../dialogs.tsx'
import { fieldError, useSubmit } from '../forms.tsx'
import { announce, Button, Card, ErrorNotice, Loaded, Notice, Page } from '../ui.tsx'
import { ReadOnlyNote, useManageBlock } from './policy/read-only.tsx'
import { AccountLimitsCard } from './routing/account-limits.tsx'

export default function Routing() {
  const can = useAbilities()
  const routing = createAsync(() => getRouting())
  // The providers fill in their picker; the form works without them.
  const providers = createOptional(() => getRoutingProviders())
  return (
    <Page
      title="Routing"
      description="Restrict, for the whole account, which models its keys may call and which providers may serve them. Keys and guardrails can restrict further, never widen."
    >
      <Show when={!can().manage}>
        <ReadOnlyNote what="routing restrictions" />
      </Show>
      <Loaded data={routing} retry={() => revalidate(getRouting.key)}>
        {(current) => (
          <RoutingForm
            current={current}
            providers={providers.latest()?.providers}
            providersError={providers.error()}
            canManage={can().manage}
          />
        )}
      </Loaded>
      <AccountLimitsCard canManage={can().manage} />
    </Page>
  )
}

function RoutingForm(props: {
  current: RoutingView
  providers: RoutingProviders['providers'] | undefined
  providersError: unknown
  canManage: boolean
}) {
  // The form keeps what was saved last itself, so saving does not rebuild it (nor close its dialogs early).
  const [saved, setSaved] = createSignal(props.current)
  const [models, setModels] = createSignal<string[]>(props.current.models ?? [])
  const [providerIds, setProviderIds] = createSignal<string[]>(props.current.providers ?? [])
  const submit = useSubmit()
  const blocked = useManageBlock()
  const listed = (ids: string[]) => (ids.length > 0 ? ids : null)
  const unchanged = () =>
    JSON.stringify(listed(models())) === JSON.stringify(saved().models) &&
    JSON.stringify(listed(providerIds())) === JSON.stringify(saved().providers)

  const put = async (
    body: { models: string[] | null; providers: string[] | null },
    words: string,
  ) => {
    const answer = await api<RoutingView>('PUT', '/routing', body)
    setSaved(answer)
    setModels(answer.models ?? [])
    setProviderIds(answer.providers ?? [])
    announce(words)
  }
  const save = async (event: SubmitEvent) => {
    event.preventDefault()
    await submit.run(() =>
      put({ models: listed(models()), providers: listed(providerIds()) }, 'Routing saved.'),
    )
  }

  /** Allowed models that no allowed provider serves: every request for them would be refused. */
  const stranded = createMemo(() => {
    if (!props.providers || models().length === 0 || providerIds().length === 0) return []
    const served = new Set(
      props.providers
        .filter((provider) => providerIds().includes(provider.id))
        .flatMap((provider) => provider.models),
    )
    return models().filter((model) => !served.has(model))
  })
  const providerOptions = () =>
    (props.providers ?? []).map((provider) => ({
      id: provider.id,
      detail:
        provider.models.length === 1 ? 'serves 1 model' : `serves ${provider.models.length} models`,
    }))

  return (
    <form class="stack" onSubmit={save} novalidate>
      <Notice title="An empty list means no restriction">
        With no models chosen, keys may call every model in the catalog; with no providers chosen,
        any provider may serve them. A request outside these lists is refused with 403{' '}
        <code>model_not_allowed</code>.
      </Notice>
      <Card title={ALLOWLIST_LABELS.models}>
        <ModelPicker
          choices="exact"
          label="Models the account's keys may call"
          value={models()}
          onChange={setModels}
          disabled={!props.canManage}
          emptyText="Every model (no restriction)"
          hint="Exact model IDs. A key may call a model only when the key, its guardrail and this list all allow it."
          error={fieldError(submit.error(), 'models')}
        />
      </Card>
      <Card title={ALLOWLIST_LABELS.providers}>
        <MultiSelect
          label="Providers that may serve requests"
          options={providerOptions()}
          value={providerIds()}
          onChange={setProviderIds}
          disabled={!props.canManage}
          emptyText="Any provider (no restriction)"
          placeholder="Search providers…"
          hint="A model served by several providers is routed only to the allowed ones."
          status={
            props.providersError
              ? 'The provider list could not be loaded; reload the page to choose providers.'
              : undefined
          }
          error={fieldError(submit.error(), 'providers')}
        />
        <Show when={stranded().length > 0}>
          <Notice tone="warning" title="Some allowed models have no allowed provider">
            No allowed provider serves{' '}
            <For each={stranded()}>
              {(model, index) => (
                <>
                  {index() > 0 ? ', ' : ''}
                  <code>{model}</code>
                </>
              )}
            </For>
            : requests for {stranded().length === 1 ? 'it' : 'them'} will be refused.
          </Notice>
        </Show>
      </Card>
      <Show
        when={
          submit.error() &&
          !(
            submit.error() instanceof ApiError &&
            ['models', 'providers'].includes((submit.error() as ApiError).param ?? '')
          )
        }
      >
        <ErrorNotice error={submit.error()} />
      </Show>
      <div class="row">
        <Button
          type="submit"
          variant="primary"
          busy={submit.busy()}
          disabled={!props.canManage || unchanged()}
          title={blocked()}
        >
          Save routing
        </Button>
        <ConfirmButton
          label="Remove restrictions"
          title="Remove all routing restrictions?"
          confirmLabel="Remove restrictions"
          variant="secondary"
          disabled={!props.canManage || (saved().models === null && saved().providers === null)}
          disabledTitle={blocked()}
          onConfirm={() => put({ models: null, providers: null }, 'Routing restrictions removed.')}
        >
          <p>
            Every key of the account may then call any model, served by any provider, unless the key
            or its guardrail restricts it.
          </p>
        </ConfirmButton>
        <Show when={!unchanged()}>
          <span class="small muted">Unsaved changes</span>
        </Show>
      </div>
    </form>
  )
}
