/**
 * A chart over UTC days, drawn by uPlot on a canvas, with its own legend that shows each series' value
 * under the pointer. The canvas is an image to assistive technology: it carries the chart's name
 * (`label`) and a one-sentence summary; the page puts the numbers in a table beside it. Only the usage
 * page imports this file, so uPlot and its CSS load with that page alone.
 */
import { createEffect, createSignal, createUniqueId, For, onCleanup, onMount, Show } from 'solid-js'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

/** `values` are drawn (floats are fine for pixels); `shown` are the same values as the legend writes them. */
export type ChartSeries = { label: string; color: string; values: number[]; shown: string[] }

/** Distinct in light and dark themes; the last one (grey) is for "Other". */
export const PALETTE = ['#4c6ef5', '#e8590c', '#2f9e44', '#ae3ec9', '#1098ad', '#f59f00']
export const OTHER_COLOR = '#868e96'

const DAY_S = 86_400

type ChartProps = {
  /** The chart's accessible name. */
  label: string
  /** One sentence saying what the chart shows (read after the name). */
  summary: string
  /** Start of each UTC day, in seconds. */
  days: number[]
  series: ChartSeries[]
  kind: 'bars' | 'lines'
  /** A value on the y axis (shorter). */
  axis: (value: number) => string
  height?: number
}

export function TimeChart(props: ChartProps) {
  const summaryId = createUniqueId()
  const [hover, setHover] = createSignal<number | null>(null)
  let container: HTMLDivElement | undefined
  let plot: uPlot | undefined

  const build = () => {
    plot?.destroy()
    if (!container) return
    const style = getComputedStyle(container)
    const muted = style.getPropertyValue('--muted').trim() || '#666'
    const grid = style.getPropertyValue('--border').trim() || '#ddd'
    const axis = {
      stroke: muted,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    }
    const bars = props.kind === 'bars' ? uPlot.paths.bars!({ size: [0.7, 48] }) : undefined
    plot = new uPlot(
      {
        width: Math.max(container.clientWidth, 280),
        height: props.height ?? 240,
        legend: { show: false },
        cursor: { drag: { x: false, y: false }, points: { show: props.kind === 'lines' } },
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        scales: {
          // Half a day either side, so the first and last bars are whole.
          x: { time: true, range: (_, min, max) => [min - DAY_S / 2, max + DAY_S / 2] },
          y: { range: (_, __, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          { ...axis, space: 60 },
          {
            ...axis,
            size: axisWidth,
            values: (_, splits) => splits.map((value) => props.axis(value)),
          },
        ],
        series: [
          {},
          ...props.series.map((series) => ({
            label: series.label,
            stroke: series.color,
            width: props.kind === 'bars' ? 0 : 2,
            fill: props.kind === 'bars' ? series.color : undefined,
            paths: bars,
            points: { show: props.kind === 'lines' && props.days.length <= 31, size: 5 },
          })),
        ],
        hooks: { setCursor: [(chart) => setHover(chart.cursor.idx ?? null)] },
      },
      [props.days, ...props.series.map((series) => series.values)],
      container,
    )
  }

  onMount(() => {
    const observer = new ResizeObserver(() => {
      if (plot && container)
        plot.setSize({ width: Math.max(container.clientWidth, 280), height: props.height ?? 240 })
    })
    if (container) observer.observe(container)
    onCleanup(() => observer.disconnect())
  })
  // Rebuilt when the data changes (a new period): cheap for a few hundred points.
  createEffect(() => {
    void props.days
    void props.series
    build()
  })
  onCleanup(() => plot?.destroy())

  const hoveredDay = () => {
    const index = hover()
    return index === null || props.days[index] === undefined ? null : index
  }

  return (
    <div class="chart-block">
      <div
        class="chart"
        ref={container}
        role="img"
        aria-label={props.label}
        aria-describedby={summaryId}
      />
      <p id={summaryId} class="small muted chart-summary">
        {props.summary}
      </p>
      <div class="legend">
        <Show when={hoveredDay() !== null}>
          <span class="legend-day">{dayLabel(props.days[hoveredDay()!]!)}</span>
        </Show>
        <For each={props.series}>
          {(series) => (
            <span class="legend-item">
              <span class="swatch" style={{ background: series.color }} aria-hidden="true" />
              {series.label}
              <Show when={hoveredDay() !== null}>
                <span class="legend-value">{series.shown[hoveredDay()!] ?? ''}</span>
              </Show>
            </span>
          )}
        </For>
      </div>
    </div>
  )
}

/**
 * The y axis' width in CSS pixels: room for its longest value ("$0.00006", "1.2M") at the axis' 12px
 * font, beside the tick and the gap, so no value is cut at the chart's left edge.
 */
function axisWidth(_: uPlot, values: string[] | null): number {
  const longest = Math.max(0, ...(values ?? []).map((value) => value.length))
  return Math.max(48, Math.ceil(longest * 7.5) + 20)
}

/** "Jan 5": a UTC day, as the charts and their tables name it. */
export function dayLabel(seconds: number): string {
  return new Date(seconds * 1000).toLocaleDateString(undefined, {
    timeZone: 'UTC',
    month: 'short',
    day: 'numeric',
  })
}
