/** A small seeded pseudo-random generator (mulberry32), so a randomized test can be run again exactly. */
export type Prng = {
  /** A number in [0, 1). */
  next(): number
  /** An integer in [low, high]. */
  int(low: number, high: number): number
  /** True with probability `p`. */
  chance(p: number): boolean
  pick<T>(items: readonly T[]): T
  /** An item chosen with the given weights. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T
}

export function prng(seed: number): Prng {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
  const int = (low: number, high: number) => low + Math.floor(next() * (high - low + 1))
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => items[int(0, items.length - 1)]!,
    weighted(choices) {
      const total = choices.reduce((sum, [, weight]) => sum + weight, 0)
      let at = next() * total
      for (const [choice, weight] of choices) {
        at -= weight
        if (at < 0) return choice
      }
      return choices.at(-1)![0]
    },
  }
}

/** The seed from `variable` in the environment, or a new random one. */
export function seedFrom(variable: string): number {
  const given = process.env[variable]
  if (given !== undefined && given !== '') {
    const seed = Number(given)
    if (!Number.isSafeInteger(seed)) throw new Error(`${variable} must be an integer, not ${given}`)
    return seed
  }
  return Math.floor(Math.random() * 2 ** 31)
}
