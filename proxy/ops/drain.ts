/**
 * Draining at shutdown, in order: the listeners close (no new connections; requests in progress go on),
 * open requests get until the drain deadline to finish, then running streams are cut (their upstream
 * aborted, so the relay ends the client's stream and settles what was delivered), then the remaining
 * connections are closed (a request still waiting on its provider sees its client leave and releases
 * its hold). It returns once every hold this process placed has ended, or the last grace period passed.
 */
import type { Ceiling } from '../pipeline/ceiling.ts'
import type { Inflight } from '../pipeline/inflight.ts'
import { log } from '../core/log.ts'

/** A Bun server: stop(false) closes the listener, stop(true) also closes the connections. */
export type Listener = { stop(closeActiveConnections?: boolean): Promise<void> }

export type DrainDeps = { inflight: Inflight; ceiling: Ceiling; listeners: Listener[] }

/** Time for cut streams to send their error event and settle before connections are closed. */
const CUT_GRACE_MS = 1_000
/**
 * Time for requests whose connections were closed to end their holds. A settle that needs longer is
 * retrying against an unreachable store; its hold expires at its deadline whether the process waits or not.
 */
const SETTLE_GRACE_MS = 2_000

export type DrainResult = { finished: boolean; cut: number; leftOpen: number }

export async function drain(deps: DrainDeps, drainMs: number): Promise<DrainResult> {
  for (const listener of deps.listeners) void listener.stop(false).catch(() => {})
  const finished = await quiet(deps, drainMs)
  let cut = 0
  if (!finished) {
    cut = deps.inflight.cutAll()
    log.warn('drain deadline passed; cutting open requests', {
      drainMs,
      cut,
      open: deps.inflight.size,
    })
    if (cut > 0) await quiet(deps, CUT_GRACE_MS)
  }
  await Promise.all(deps.listeners.map((listener) => listener.stop(true).catch(() => {})))
  if (!(await quiet(deps, SETTLE_GRACE_MS))) {
    log.error('holds still open at shutdown; they expire at their deadline', {
      open: deps.inflight.size,
    })
  }
  return { finished, cut, leftOpen: deps.inflight.size }
}

/**
 * Waits until no hold is open and no model request is in progress (one may be between reading its body
 * and placing its hold), or the time is up.
 */
async function quiet(deps: DrainDeps, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs
  for (;;) {
    if (!(await deps.inflight.drained(until - Date.now()))) return false
    if (deps.ceiling.inUse === 0) return true
    if (Date.now() >= until) return false
    await Bun.sleep(10)
  }
}
