/**
 * Searching large texts off the event loop. A guardrail's own patterns and keyword lists are linear in
 * the text but, for some patterns, slow per character (a second or more per MB); on the request's thread
 * such a scan would hold every other request of the process. Texts above WORKER_ABOVE_CHARS in all go to
 * one scan worker, one scan at a time; a scan past its deadline ends the worker (the only way to stop
 * it), refuses its request, and the scans queued behind it go to a new worker.
 */
import type { ScanRequest } from './scan-worker.ts'
import type { TextsInspection } from './inspect-texts.ts'

/** Texts of more than this many characters in all are searched in the scan worker. */
export const WORKER_ABOVE_CHARS = 256 * 1024
/** How long a scan in the worker may take, from when it was asked for. */
export const SCAN_DEADLINE_MS = 10_000

export class ScanTimeout extends Error {}

type Pending = {
  request: ScanRequest
  resolve: (inspection: TextsInspection) => void
  reject: (error: Error) => void
  timer: Timer
}

let worker: Worker | undefined
let nextId = 0
const pending = new Map<number, Pending>()

function startWorker(): Worker {
  const started = new Worker(new URL('./scan-worker.ts', import.meta.url).href)
  started.onmessage = (
    event: MessageEvent<{ id: number; inspection?: TextsInspection; failure?: string }>,
  ) => {
    const scan = pending.get(event.data.id)
    if (!scan) return
    pending.delete(event.data.id)
    clearTimeout(scan.timer)
    if (event.data.inspection) scan.resolve(event.data.inspection)
    else scan.reject(new Error(event.data.failure ?? 'the scan failed'))
  }
  started.onerror = (event) => restart(new Error(event.message))
  // An idle scan worker does not keep the process alive.
  ;(started as Worker & { unref(): void }).unref()
  return started
}

/** Ends the worker; `failed` (if given) refuses its current scan, and the others go to a new worker. */
function restart(error: Error, failed?: number): void {
  worker?.terminate()
  worker = undefined
  const current = failed ?? pending.keys().next().value
  const scan = current === undefined ? undefined : pending.get(current)
  if (scan) {
    pending.delete(current!)
    clearTimeout(scan.timer)
    scan.reject(error)
  }
  if (pending.size === 0) return
  worker = startWorker()
  for (const other of pending.values()) worker.postMessage(other.request)
}

export function scanInWorker(
  request: Omit<ScanRequest, 'id'>,
  deadlineMs = SCAN_DEADLINE_MS,
): Promise<TextsInspection> {
  worker ??= startWorker()
  const id = ++nextId
  const scan = { ...request, id }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => restart(new ScanTimeout(`no result within ${deadlineMs} ms`), id),
      deadlineMs,
    )
    pending.set(id, { request: scan, resolve, reject, timer })
    worker!.postMessage(scan)
  })
}
