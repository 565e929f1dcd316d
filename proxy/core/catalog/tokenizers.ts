/**
 * The tokenizers a catalog model can name for its family (`tokenizer` in catalog.yaml), from
 * gpt-tokenizer. Each is tens of megabytes and most of a second to load, so it is loaded on first use
 * and a process pays only for the ones its traffic needs.
 *
 * A tokenizer's merges take time that grows with the square of a word's length, and a run of text
 * without spaces (Chinese, a base64 blob, a line of one character) is one word: 20,000 Chinese
 * characters took 12 s, 140,000 three minutes, with the event loop blocked. The counters here cut every
 * run of space or non-space longer than `LONGEST_RUN` into pieces of that length and add up their counts:
 * linear in the text, and at most one token more per piece than the whole would count.
 */

export const TOKENIZERS = ['o200k_base', 'cl100k_base'] as const
export type TokenizerName = (typeof TOKENIZERS)[number]

export type TokenCounter = (text: string) => number

const loaded = new Map<TokenizerName, TokenCounter>()
const loading = new Map<TokenizerName, Promise<TokenCounter>>()

/** The longest run of one kind of character counted as one piece. */
const LONGEST_RUN = 400
const longRun = new RegExp(`\\S{${LONGEST_RUN + 1},}|\\s{${LONGEST_RUN + 1},}`)
const longRuns = new RegExp(longRun.source, 'g')

/** `count`, with runs longer than `LONGEST_RUN` counted piece by piece. */
export function boundedCounter(count: TokenCounter): TokenCounter {
  return (text) => {
    if (!longRun.test(text)) return count(text)
    let tokens = 0
    let from = 0
    for (const match of text.matchAll(longRuns)) {
      tokens += count(text.slice(from, match.index))
      for (let at = 0; at < match[0].length; at += LONGEST_RUN)
        tokens += count(match[0].slice(at, at + LONGEST_RUN))
      from = match.index + match[0].length
    }
    return tokens + count(text.slice(from))
  }
}

async function importCounter(name: TokenizerName): Promise<TokenCounter> {
  const module =
    name === 'o200k_base'
      ? await import('gpt-tokenizer/encoding/o200k_base')
      : await import('gpt-tokenizer/encoding/cl100k_base')
  return boundedCounter(module.countTokens)
}

/** The counter, once loaded (no wait). */
export function loadedTokenizer(name: TokenizerName): TokenCounter | undefined {
  return loaded.get(name)
}

export function loadTokenizer(name: TokenizerName): Promise<TokenCounter> {
  const ready = loaded.get(name)
  if (ready) return Promise.resolve(ready)
  let pending = loading.get(name)
  if (!pending) {
    pending = importCounter(name).then((counter) => {
      loaded.set(name, counter)
      return counter
    })
    loading.set(name, pending)
  }
  return pending
}
