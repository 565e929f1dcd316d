/**
 * The time of key expiry, session checks and the in-process admission store (rate, spend and hold
 * windows; Redis keeps its own time): one shared object, so tests can move it for every component at once.
 */
export type Clock = { now(): number }

export const systemClock = (): Clock => ({ now: () => Date.now() })
