/**
 * How much output a stream has delivered to its client, in tokens, for the stop at the hold and for the
 * charge when the provider never says. Three measures, each cheap until it is needed:
 *
 * - events: every streamed delta carries at least one token, so the count of content events is a lower
 *   bound for any provider;
 * - bytes: a byte-level BPE token is at least one byte, so the UTF-8 size is an upper bound;
 * - with the model family's tokenizer (catalog `tokenizer`), the exact count of the delivered text. The
 *   text is counted in pieces cut just before a space that follows a non-space, where the tokenizer's
 *   own pre-split also cuts, so the pieces add up to the count of the whole; only the unfinished word at
 *   the end is counted again each time.
 */
import { loadedTokenizer, loadTokenizer, type TokenCounter, type TokenizerName } from '../catalog/tokenizers.ts'

/** Text held back from counting past this size is counted at once (if the tokenizer is loaded). */
const PENDING_LIMIT_CHARS = 16_384
/** An unfinished word this long (no space in it) is counted as it stands. */
const LONGEST_WORD_CHARS = 1_024
/** Characters a token has on average, for the estimate without a tokenizer. */
const CHARS_PER_TOKEN = 4

export class DeliveredOutput {
  events = 0
  bytes = 0
  private chars = 0
  private countedTokens = 0
  private pending = ''

  constructor(private readonly tokenizer: TokenizerName | undefined) {}

  /** Whether the exact count is available (the catalog names the family's tokenizer). */
  get exact(): boolean {
    return this.tokenizer !== undefined
  }

  /** Notes one content event's text as delivered. */
  add(text: string): void {
    this.events += 1
    this.chars += text.length
    this.bytes += Buffer.byteLength(text)
    if (!this.tokenizer) return
    this.pending += text
    if (this.pending.length > PENDING_LIMIT_CHARS) {
      const counter = loadedTokenizer(this.tokenizer)
      if (counter) this.countSettled(counter)
      else void loadTokenizer(this.tokenizer)
    }
  }

  /** The exact token count of the delivered text (the tokenizer loads on first use). */
  async tokens(): Promise<number> {
    if (!this.tokenizer) throw new Error('no tokenizer for this model')
    const counter = loadedTokenizer(this.tokenizer) ?? (await loadTokenizer(this.tokenizer))
    this.countSettled(counter)
    return this.countedTokens + (this.pending ? counter(this.pending) : 0)
  }

  /** The charge's count when the provider reports none: exact with a tokenizer, else an estimate. */
  async estimate(): Promise<number> {
    if (this.tokenizer) return Math.max(this.events, await this.tokens())
    return Math.max(this.events, Math.ceil(this.chars / CHARS_PER_TOKEN))
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
