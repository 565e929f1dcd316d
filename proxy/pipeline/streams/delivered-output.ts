/**
 * How much output a stream has delivered to its client, in tokens, for the stop at the hold and for the
 * charge when the provider never says. Three measures, each cheap until it is needed:
 *
 * - events: every streamed delta carries at least one token, so the count of content events is a lower
 *   bound for any provider;
 * - bytes: a byte-level BPE token is at least one byte, so the UTF-8 size is an upper bound;
 * - the token count of the delivered text: exact with the model family's tokenizer (catalog
 *   `tokenizer`), else with o200k_base as the nearest public one. The text is counted in pieces cut just
 *   before a space that follows a non-space, where the tokenizer's own pre-split also cuts, so the pieces
 *   add up to the count of the whole; only the unfinished word at the end is counted again each time.
 *
 * The stop at the hold trusts only a count that cannot exceed the provider's own: the events, or the
 * exact count. An estimate never cuts an answer short.
 */
import {
  loadedTokenizer,
  loadTokenizer,
  type TokenCounter,
  type TokenizerName,
} from '../../core/catalog/tokenizers.ts'

/** Text held back from counting past this size is counted at once (if the tokenizer is loaded). */
const PENDING_LIMIT_CHARS = 16_384
/** An unfinished word this long (no space in it) is counted as it stands. */
const LONGEST_WORD_CHARS = 1_024
/** The tokenizer that estimates a family without a public one of its own. */
const NEAREST_TOKENIZER: TokenizerName = 'o200k_base'

export class DeliveredOutput {
  events = 0
  bytes = 0
  /** Whether the count is exact: the catalog names the family's tokenizer. */
  readonly exact: boolean
  private readonly tokenizer: TokenizerName
  private countedTokens = 0
  private pending = ''

  constructor(familyTokenizer: TokenizerName | undefined) {
    this.exact = familyTokenizer !== undefined
    this.tokenizer = familyTokenizer ?? NEAREST_TOKENIZER
  }

  /** Notes one content event's text as delivered. */
  add(text: string): void {
    this.events += 1
    this.bytes += Buffer.byteLength(text)
    this.pending += text
    if (this.pending.length > PENDING_LIMIT_CHARS) {
      const counter = loadedTokenizer(this.tokenizer)
      if (counter) this.countSettled(counter)
      else void loadTokenizer(this.tokenizer)
    }
  }

  /**
   * The token count of the delivered text, and of `more` after it if given (not yet delivered: counted
   * together with the unfinished word, which a delta may go on). The tokenizer loads on first use.
   */
  async tokens(more = ''): Promise<number> {
    const counter = loadedTokenizer(this.tokenizer) ?? (await loadTokenizer(this.tokenizer))
    this.countSettled(counter)
    const rest = this.pending + more
    return this.countedTokens + (rest ? counter(rest) : 0)
  }

  /** The charge's count when the provider reports none: never below the events. */
  async estimate(): Promise<number> {
    return Math.max(this.events, await this.tokens())
  }

  /** Counts the pending text up to its last cut point, keeping the unfinished word. */
  private countSettled(counter: TokenCounter): void {
    const cut = lastCut(this.pending)
    const at = cut > 0 ? cut : this.pending.length > LONGEST_WORD_CHARS ? this.pending.length : 0
    if (at === 0) return
    this.countedTokens += counter(this.pending.slice(0, at))
    this.pending = this.pending.slice(at)
  }
}

/** The last index of a space that follows a non-whitespace character (0: none). */
function lastCut(text: string): number {
  for (let at = text.lastIndexOf(' '); at > 0; at = text.lastIndexOf(' ', at - 1)) {
    if (!/\s/.test(text[at - 1]!)) return at
  }
  return 0
}
