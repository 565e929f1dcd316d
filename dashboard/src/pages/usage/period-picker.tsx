/** The usage period: 7, 30 or 90 days, as a group of radio buttons (arrow keys move between them). */
import { createUniqueId, For } from 'solid-js'
import { PERIODS, type Period } from './usage-data.ts'

export function PeriodPicker(props: { value: Period; onChange: (days: Period) => void }) {
  const name = createUniqueId()
  return (
    <fieldset class="segmented">
      <legend class="visually-hidden">Period</legend>
      <For each={PERIODS}>
        {(days) => (
          <label classList={{ checked: props.value === days }}>
            <input
              type="radio"
              name={name}
              value={days}
              checked={props.value === days}
              onChange={() => props.onChange(days)}
            />
            {days} days
          </label>
        )}
      </For>
    </fieldset>
  )
}
