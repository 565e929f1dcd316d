/**
 * Metrics across WORKERS: a scrape of any process answers the sum over all of them. The first process
 * asks every worker for its series over IPC and adds them to its own; a worker that is scraped (the API
 * port is shared, so the kernel picks the process) asks the first process for that sum. A process that
 * does not answer within a second is left out of that scrape rather than holding it up, its counters
 * and histograms as it last answered them kept in the sum; so are those of a worker that exited, so no
 * counter of the sum goes down when a worker dies or is slow.
 */
import type { Subprocess } from 'bun'
import {
  aggregateMetrics,
  countedSeries,
  metricsJson,
  setMetricsSource,
  type MetricsJson,
} from '../core/metrics.ts'

export type MetricsMessage =
  | { type: 'series?'; id: number }
  | { type: 'series'; id: number; series: MetricsJson }
  | { type: 'sum?'; id: number }
  | { type: 'sum'; id: number; text: string }

const WAIT_MS = 1_000

/** Answers awaited by id; each gives up after WAIT_MS with `fallback`. */
function replies<T>() {
  let next = 0
  const waiting = new Map<number, (value: T) => void>()
  return {
    ask(send: (id: number) => void, fallback: () => T | Promise<T>): Promise<T> {
      return new Promise((resolve) => {
        const id = ++next
        const timer = setTimeout(async () => {
          waiting.delete(id)
          resolve(await fallback())
        }, WAIT_MS)
        waiting.set(id, (value) => {
          clearTimeout(timer)
          waiting.delete(id)
          resolve(value)
        })
        try {
          send(id)
        } catch {
          // The process is gone; the timer answers with the fallback.
        }
      })
    },
    answer(id: number, value: T): void {
      waiting.get(id)?.(value)
    },
  }
}

/** In the first process: scrapes answer the sum over it and `workers()`; returns their IPC handler. */
export function sumWorkerMetrics(
  workers: () => Subprocess[],
): (message: MetricsMessage, worker: Subprocess) => void {
  const series = replies<MetricsJson | undefined>()
  /** Each running worker's series as it last answered. */
  const lastAnswered = new Map<Subprocess, MetricsJson>()
  /** What the workers that exited had counted, added up. */
  let exited: Promise<MetricsJson> = Promise.resolve([])
  const sum = async () => {
    const running = workers()
    for (const [worker, last] of lastAnswered) {
      if (running.includes(worker)) continue
      lastAnswered.delete(worker)
      exited = exited.then((before) => countedSeries([before, last]))
    }
    const theirs = await Promise.all(
      running.map(async (worker) => {
        const answer = await series.ask(
          (id) => worker.send({ type: 'series?', id } satisfies MetricsMessage),
          () => undefined,
        )
        if (answer) lastAnswered.set(worker, answer)
        const last = lastAnswered.get(worker)
        return answer ?? (last && (await countedSeries([last])))
      }),
    )
    const all = [await metricsJson(), await exited, ...theirs.filter((each) => each !== undefined)]
    return aggregateMetrics(all)
  }
  setMetricsSource(sum)
  return (message, worker) => {
    if (message.type === 'series') series.answer(message.id, message.series)
    else if (message.type === 'sum?')
      void sum().then((text) =>
        worker.send({ type: 'sum', id: message.id, text } satisfies MetricsMessage),
      )
  }
}

/** In a worker: answers the first process's requests for its series; scrapes ask it for the sum. */
export function reportWorkerMetrics(): void {
  const send = process.send?.bind(process)
  if (!send) return
  const sums = replies<string>()
  process.on('message', async (message: MetricsMessage) => {
    if (message.type === 'series?')
      send({ type: 'series', id: message.id, series: await metricsJson() } satisfies MetricsMessage)
    else if (message.type === 'sum') sums.answer(message.id, message.text)
  })
  setMetricsSource(() =>
    sums.ask(
      (id) => send({ type: 'sum?', id } satisfies MetricsMessage),
      async () => aggregateMetrics([await metricsJson()]),
    ),
  )
}
