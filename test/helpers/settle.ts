/**
 * The error a promise rejects with; fails when it resolves. Tests use this (and `expect(await p)`) rather
 * than bun:test's `expect(p).resolves` / `.rejects`: those matchers wait for the promise inside a nested
 * event-loop turn that does not run the rest of the current setImmediate batch, and the Postgres client
 * flushes its writes with setImmediate, so a matcher that waits on a server in this process can stall
 * the database until the test times out.
 */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    if (error instanceof Error) return error
    throw new Error(`Rejected with a non-Error: ${String(error)}`)
  }
  throw new Error('Expected a rejection; the promise resolved')
}
