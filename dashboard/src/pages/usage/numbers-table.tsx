/** A chart's numbers as a table, folded under it: one row per UTC day, one column per series. */
import { For } from 'solid-js'
import { dayLabel } from '../../chart.tsx'

export function NumbersTable(props: {
  summary: string
  days: number[]
  columns: { label: string; cells: string[] }[]
}) {
  return (
    <details class="numbers">
      <summary>{props.summary}</summary>
      <div class="table-wrap">
        <table class="data narrow-cards">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <For each={props.columns}>
                {(column) => (
                  <th scope="col" class="num">
                    {column.label}
                  </th>
                )}
              </For>
            </tr>
          </thead>
          <tbody>
            <For each={props.days}>
              {(day, index) => (
                <tr>
                  <th scope="row">{dayLabel(day)}</th>
                  <For each={props.columns}>
                    {(column) => (
                      <td class="num" data-label={column.label}>
                        {column.cells[index()]}
                      </td>
                    )}
                  </For>
                </tr>
              )}
            </For>
          </tbody>
        </table>
      </div>
    </details>
  )
}
