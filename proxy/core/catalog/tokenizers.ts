/**
 * The tokenizers a catalog model can name for its family (`tokenizer` in catalog.yaml), from
 * gpt-tokenizer. Each is tens of megabytes and most of a second to load, so it is loaded on first use
 * and a process pays only for the ones its traffic needs.
 */

export const TOKENIZERS = ['o200k_base', 'cl100k_base'] as const
export type TokenizerName = (typeof TOKENIZERS)[number]

export type TokenCounter = (text: string) => number

const loaded = new Map<TokenizerName, TokenCounter>()
const loading = new Map<TokenizerName, Promise<TokenCounter>>()

async function importCounter(name: TokenizerName): Promise<TokenCounter> {
  const module =
    name === 'o200k_base'
      ? await import('gpt-tokenizer/encoding/o200k_base')
      : await import('gpt-tokenizer/encoding/cl100k_base')
  return module.countTokens
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
