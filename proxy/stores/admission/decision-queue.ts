/**
 * Group commit of an account's decisions: a decision goes at once when the account has fewer than two
 * calls in flight; otherwise it waits with the others for a call to return, and they go together in the
 * next one (lua/decide.lua runs them in order). Under load this saves per-call work on both sides.
 */
import type { Reply } from './redis-replies.ts'

type Decision = {
  args: (string | number)[]
  resolve: (reply: Reply) => void
  reject: (error: unknown) => void
}
type AccountQueue = { inFlight: number; waiting: Decision[] }

/** Most decisions in one call. */
const MAX_BATCH = 32
/** Calls in flight per account; decisions arriving meanwhile wait and go together. */
const MAX_IN_FLIGHT = 2

export class DecisionQueue {
  private readonly queues = new Map<string, AccountQueue>()

  /** `call`: one call with a batch of an account's decisions, one reply per decision. */
  constructor(
    private readonly call: (accountId: string, args: (string | number)[]) => Promise<Reply[]>,
  ) {}

  decide(accountId: string, args: (string | number)[]): Promise<Reply> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(accountId)
      if (!queue) {
        queue = { inFlight: 0, waiting: [] }
        this.queues.set(accountId, queue)
      }
      queue.waiting.push({ args, resolve, reject })
      if (queue.inFlight < MAX_IN_FLIGHT) this.send(accountId, queue)
    })
  }

  /**
   * One call with the account's waiting decisions: settles, releases, lease charges and shrinks first
   * (they free what admissions may need), then admissions in arrival order, then lease growth (which
   * takes only what the admissions left).
   */
  private send(accountId: string, queue: AccountQueue): void {
    const waiting = queue.waiting.splice(0, MAX_BATCH)
    if (waiting.length === 0) {
      if (queue.inFlight === 0) this.queues.delete(accountId)
      return
    }
    const phase = (decision: Decision) =>
      decision.args[0] === 'admit' ? 1 : decision.args[0] === 'grow' ? 2 : 0
    const batch = [0, 1, 2].flatMap((at) => waiting.filter((decision) => phase(decision) === at))
    queue.inFlight += 1
    this.call(
      accountId,
      batch.flatMap((decision) => decision.args),
    )
      .then(
        (replies) => batch.forEach((decision, index) => decision.resolve(replies[index]!)),
        (error) => batch.forEach((decision) => decision.reject(error)),
      )
      .finally(() => {
        queue.inFlight -= 1
        this.send(accountId, queue)
      })
  }
}
