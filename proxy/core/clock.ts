/** The time of key expiry and session checks: one shared object, so tests can move it for every component at once. */
export type Clock = { now(): number }

export const systemClock = (): Clock => ({ now: () => Date.now() })
