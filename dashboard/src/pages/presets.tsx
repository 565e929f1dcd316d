/**
 * Presets: a saved model, fallbacks and default parameters that clients call as `@preset/<slug>`, so the
 * model can change here without changing clients. List, create, edit, delete, and how to call one.
 */
import { createAsyncStore, revalidate } from '@solidjs/router'
import { createMemo, createSignal, For, Show } from 'solid-js'
import type { Preset, PresetDeleted } from '../../../shared/schemas/admin/policy.ts'
import { api } from '../api.ts'
import { getCatalog, getPresets, getRouting, routedEntries } from '../data.ts'
import { dateTime, relative } from '../format.ts'
import { createOptional } from '../reading.ts'
import { useAbilities } from '../session.tsx'
import { ConfirmButton, Dialog } from '../dialogs.tsx'
import { SelectField } from '../forms.tsx'
import { announce, Badge, Button, Card, CopyButton, Empty, Loaded, Page } from '../ui.tsx'
import { PresetForm } from './policy/preset-form.tsx'
import { PresetSample } from './policy/preset-sample.tsx'
import { ReadOnlyNote, useManageBlock } from './policy/read-only.tsx'

export default function Presets() {
  const can = useAbilities()
  const blocked = useManageBlock()
  // Reconciled by id: a row's open dialog or focused button survives the list being read again.
  const presets = createAsyncStore(() => getPresets(), { reconcile: { key: 'id' } })
  const reread = () => revalidate(getPresets.key)
  // The models the account's routing allows narrow the form's pickers; the list shows without them.
  const routing = createOptional(() => getRouting())
  const catalog = createOptional(() => getCatalog())
  const [editing, setEditing] = createSignal<Preset | 'new'>()
  // A model the catalog or routing changed under a saved preset: every call that reaches it is refused.
  const problems = createMemo(() => {
    const entries = catalog.latest()
    if (!entries) return () => undefined
    const listed = new Set(entries.map((entry) => entry.id))
    const routed = new Set(
      routedEntries(entries, routing.latest()?.models).map((entry) => entry.id),
    )
    return (model: string): ModelProblem | undefined =>
      !listed.has(model) ? 'unavailable' : !routed.has(model) ? 'forbidden' : undefined
  })

  const saved = (preset: Preset) => {
    setEditing(undefined)
    announce(`Saved ${preset.id}.`)
    void reread()
  }
  const remove = async (preset: Preset) => {
    await api<PresetDeleted>('DELETE', `/presets/${encodeURIComponent(preset.slug)}`)
    announce(`Deleted ${preset.id}.`)
    void reread()
  }

  return (
    <Page
      title="Presets"
      description="A preset saves a model, its fallbacks and default parameters under a name. Clients send it as the model; change the preset here and every client follows, without a deploy."
      actions={
        <Button
          variant="primary"
          disabled={!can().manage}
          title={blocked()}
          onClick={() => setEditing('new')}
        >
          New preset
        </Button>
      }
    >
      <Show when={!can().manage}>
        <ReadOnlyNote what="presets" />
      </Show>
      <Loaded data={presets} retry={reread}>
        {(list) => (
          <Show
            when={list.presets.length > 0}
            fallback={
              <Card>
                <Empty title="No presets yet">
                  Make one, then send <code>"model": "@preset/&lt;slug&gt;"</code> from any client
                  style.
                </Empty>
              </Card>
            }
          >
            <Card>
              <PresetTable
                presets={list.presets}
                problem={(model) => problems()(model)}
                canManage={can().manage}
                onEdit={setEditing}
                onDelete={remove}
              />
            </Card>
            <SampleCard presets={list.presets} baseUrl={list.baseUrl} />
          </Show>
        )}
      </Loaded>
      <Dialog
        open={editing() !== undefined}
        wide
        title={
          editing() === 'new' || editing() === undefined
            ? 'New preset'
            : `Edit ${(editing() as Preset).id}`
        }
        onClose={() => setEditing(undefined)}
      >
        <Show when={editing()} keyed>
          {(target) => (
            <PresetForm
              preset={target === 'new' ? undefined : target}
              taken={presets.latest?.presets.map((preset) => preset.slug) ?? []}
              allowedModels={routing.latest()?.models}
              onSaved={saved}
              onCancel={() => setEditing(undefined)}
            />
          )}
        </Show>
      </Dialog>
    </Page>
  )
}

type ModelProblem = 'unavailable' | 'forbidden'

/** A preset's model or fallback, flagged when calls cannot reach it. */
function PresetModel(props: { model: string; problem: ModelProblem | undefined }) {
  return (
    <>
      <span class="mono">{props.model}</span>
      <Show when={props.problem === 'unavailable'}>
        {' '}
        <Badge tone="bad">Not available</Badge>
        <div class="hint">No provider here serves it now.</div>
      </Show>
      <Show when={props.problem === 'forbidden'}>
        {' '}
        <Badge tone="warn">Not allowed by routing</Badge>
        <div class="hint">Calls are refused until the Routing page allows it.</div>
      </Show>
    </>
  )
}

function PresetTable(props: {
  presets: readonly Preset[]
  problem: (model: string) => ModelProblem | undefined
  canManage: boolean
  onEdit: (preset: Preset) => void
  onDelete: (preset: Preset) => Promise<unknown>
}) {
  const blocked = useManageBlock()
  return (
    <div class="table-wrap">
      <table class="policy-table narrow-cards">
        <thead>
          <tr>
            <th scope="col">Preset</th>
            <th scope="col">Model</th>
            <th scope="col">Fallbacks</th>
            <th scope="col">Defaults</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <For each={props.presets}>
            {(preset) => (
              <tr>
                <th scope="row">
                  <div class="row-actions">
                    <code>{preset.id}</code>
                    <CopyButton text={preset.id} label={`Copy ${preset.id}`} variant="ghost" />
                  </div>
                </th>
                <td class="small" data-label="Model">
                  <PresetModel model={preset.model} problem={props.problem(preset.model)} />
                </td>
                <td class="small" data-label="Fallbacks">
                  <Show
                    when={preset.fallbacks.length > 0}
                    fallback={<span class="muted">None</span>}
                  >
                    <ol class="plain-list">
                      <For each={preset.fallbacks}>
                        {(fallback) => (
                          <li>
                            <PresetModel model={fallback} problem={props.problem(fallback)} />
                          </li>
                        )}
                      </For>
                    </ol>
                  </Show>
                </td>
                <td class="small" data-label="Defaults">
                  <ParamList preset={preset} />
                </td>
                <td class="small" data-label="Updated">
                  <time datetime={preset.updatedAt} title={dateTime(preset.updatedAt)}>
                    {relative(preset.updatedAt)}
                  </time>
                </td>
                <td>
                  <div class="row-actions">
                    <Button
                      variant="ghost"
                      aria-label={`Edit ${preset.id}`}
                      disabled={!props.canManage}
                      title={blocked()}
                      onClick={() => props.onEdit(preset)}
                    >
                      Edit
                    </Button>
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete ${preset.id}`}
                      title={`Delete ${preset.id}?`}
                      confirmLabel="Delete preset"
                      disabled={!props.canManage}
                      disabledTitle={blocked()}
                      onConfirm={() => props.onDelete(preset)}
                    >
                      <p>
                        Requests naming <code>{preset.id}</code> are refused (404) from then on.
                        Change its model instead if clients still use it.
                      </p>
                    </ConfirmButton>
                  </div>
                </td>
              </tr>
            )}
          </For>
        </tbody>
      </table>
    </div>
  )
}

function ParamList(props: { preset: Preset }) {
  const entries = () =>
    [
      props.preset.params.temperature !== undefined
        ? `temperature ${props.preset.params.temperature}`
        : '',
      props.preset.params.top_p !== undefined ? `top_p ${props.preset.params.top_p}` : '',
      props.preset.params.max_tokens !== undefined
        ? `max_tokens ${props.preset.params.max_tokens}`
        : '',
      props.preset.params.stop?.length
        ? `stop ${props.preset.params.stop.map((stop) => JSON.stringify(stop)).join(', ')}`
        : '',
    ].filter(Boolean)
  return (
    <Show when={entries().length > 0} fallback={<span class="muted">The model's own</span>}>
      <ul class="plain-list">
        <For each={entries()}>{(entry) => <li class="mono">{entry}</li>}</For>
      </ul>
    </Show>
  )
}

function SampleCard(props: { presets: readonly Preset[]; baseUrl: string }) {
  const [chosen, setChosen] = createSignal(props.presets[0]?.id ?? '')
  const presetId = () =>
    props.presets.some((preset) => preset.id === chosen()) ? chosen() : (props.presets[0]?.id ?? '')
  return (
    <Card title="Call a preset">
      <p class="muted">
        Send the preset's name as the model, with one of your keys in <code>API_KEY</code>. It works
        in every client style: Chat Completions, Responses and Messages.
      </p>
      <Show when={props.presets.length > 1}>
        <SelectField
          label="Preset"
          value={presetId()}
          onValue={setChosen}
          options={props.presets.map((preset) => ({ value: preset.id, label: preset.id }))}
        />
      </Show>
      <PresetSample baseUrl={props.baseUrl} presetId={presetId()} />
    </Card>
  )
}
