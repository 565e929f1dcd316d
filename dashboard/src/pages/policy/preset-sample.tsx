/**
 * How to call a preset: a curl command and the OpenAI SDK (Python), with the API's real address and the
 * preset's exact model name. The key stays a placeholder: the dashboard never has it.
 */
import { For } from 'solid-js'
import { CopyButton } from '../../ui.tsx'

export function presetSamples(
  baseUrl: string,
  presetId: string,
): { title: string; code: string }[] {
  const curl = [
    `curl ${baseUrl}/v1/chat/completions \\`,
    `  -H "Authorization: Bearer $API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"model": "${presetId}", "messages": [{"role": "user", "content": "Hello"}]}'`,
  ].join('\n')
  const python = [
    'import os',
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${baseUrl}/v1", api_key=os.environ["API_KEY"])`,
    'reply = client.chat.completions.create(',
    `    model="${presetId}",`,
    '    messages=[{"role": "user", "content": "Hello"}],',
    ')',
    'print(reply.choices[0].message.content)',
  ].join('\n')
  return [
    { title: 'curl', code: curl },
    { title: 'OpenAI SDK (Python)', code: python },
  ]
}

export function PresetSample(props: { baseUrl: string; presetId: string }) {
  return (
    <div class="stack">
      <For each={presetSamples(props.baseUrl, props.presetId)}>
        {(sample) => (
          <figure class="code-sample">
            <figcaption class="row-actions">
              <span>{sample.title}</span>
              <CopyButton
                text={sample.code}
                label={`Copy the ${sample.title} example`}
                variant="ghost"
              />
            </figcaption>
            <pre tabindex="0">
              <code>{sample.code}</code>
            </pre>
          </figure>
        )}
      </For>
    </div>
  )
}
