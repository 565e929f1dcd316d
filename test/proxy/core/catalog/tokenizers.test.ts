// The tokenizers' counters on text a client controls: a run without spaces is one word to the tokenizer,
// whose merges grow with the square of its length (20,000 Chinese characters took 12 s with the event
// loop blocked). Counted piece by piece, such text takes milliseconds, and counts within a token a piece
// of the whole; ordinary text counts exactly.
import { describe, expect, test } from 'bun:test'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { loadTokenizer, TOKENIZERS } from '../../../../proxy/core/catalog/tokenizers.ts'

describe('token counters', () => {
  // Whole, the first of these texts alone takes minutes: the test's limit is ten seconds.
  for (const name of TOKENIZERS)
    test(`${name}: long runs without spaces, of letters, symbols or spaces, count at once`, async () => {
      const count = await loadTokenizer(name)
      for (const text of [
        '数据处理和分析'.repeat(20_000),
        'a'.repeat(200_000),
        '!'.repeat(100_000),
        ' '.repeat(100_000),
        `${'x'.repeat(50_000)} and a sentence after it`,
      ])
        expect(count(text)).toBeGreaterThan(0)
    }, 10_000)

  test('ordinary text counts exactly; a long run within a token a piece of its exact count', async () => {
    const count = await loadTokenizer('o200k_base')
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(500)
    expect(count(prose)).toBe(countTokens(prose))
    const run = '数据处理和分析'.repeat(300) // 2,100 characters: six pieces
    const exact = countTokens(run)
    expect(count(run)).toBeGreaterThanOrEqual(exact)
    expect(count(run)).toBeLessThanOrEqual(exact + 6)
  })
})
