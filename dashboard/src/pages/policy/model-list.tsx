/** A model list in a table cell: the "no restriction" words for none, a few IDs inline, a longer list folded. */
import { For, Show } from 'solid-js'

export function ModelList(props: { models: readonly string[] | null; all?: string }) {
  return (
    <Show when={props.models} fallback={<span class="muted">{props.all ?? 'All models'}</span>}>
      {(models) => (
        <Show
          when={models().length > 3}
          fallback={
            <ul class="plain-list">
              <For each={models()}>{(model) => <li class="mono">{model}</li>}</For>
            </ul>
          }
        >
          <details>
            <summary>{models().length} models</summary>
            <ul class="plain-list">
              <For each={models()}>{(model) => <li class="mono">{model}</li>}</For>
            </ul>
          </details>
        </Show>
      )}
    </Show>
  )
}
