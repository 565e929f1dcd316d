/**
 * `context_too_long`: a candidate whose context cannot hold the prompt is dropped; when none can, the
 * request is refused with the prompt's token count and the largest context on offer. The prompt's byte
 * bound (a token is at least one byte) settles almost every request without tokenizing; only a prompt
 * whose bound exceeds a candidate's context is counted, with the o200k tokenizer (loaded on first use).
 */
import { ServiceError } from '../../../shared/errors.ts'
import type { Candidate } from '../../core/call.ts'
import { loadTokenizer, type TokenizerName } from '../../core/catalog/tokenizers.ts'

export type PromptSize = {
  /** Upper bound of the prompt's tokens (its text bytes plus fixed overheads). */
  boundTokens: number
  /** Overheads counted beside the text (message framing, images). */
  overheadTokens: number
  /** The tool-use prompt a Messages-style provider adds (0 without tools), counted only for such a provider. */
  toolPromptTokens: number
  /** The prompt's texts, read only if a count is needed. */
  texts: () => string[]
}

/**
 * The prompt's tokens by `tokenizer` (o200k, the common one, when the model's is not public), with the
 * tool-use prompt when the provider that reads it is of the Messages style (`toolPrompt`).
 */
export async function countPromptTokens(
  size: Pick<PromptSize, 'overheadTokens' | 'toolPromptTokens' | 'texts'>,
  tokenizer: TokenizerName = 'o200k_base',
  toolPrompt = true,
): Promise<number> {
  const count = await loadTokenizer(tokenizer)
  let tokens = size.overheadTokens + (toolPrompt ? size.toolPromptTokens : 0)
  for (const text of size.texts()) tokens += count(text)
  return tokens
}

export type ContextFit =
  | { ok: true; candidates: Candidate[]; promptTokens?: number }
  | { ok: false; error: ServiceError }

export async function fitContext(candidates: Candidate[], size: PromptSize): Promise<ContextFit> {
  if (candidates.every(({ model }) => size.boundTokens <= model.contextLength))
    return { ok: true, candidates }
  const promptTokens = await countPromptTokens(size)
  const fitting = candidates.filter(({ model }) => promptTokens <= model.contextLength)
  if (fitting.length > 0) return { ok: true, candidates: fitting, promptTokens }
  const largest = candidates.reduce((best, candidate) =>
    candidate.model.contextLength > best.model.contextLength ? candidate : best,
  )
  const which =
    candidates.length === 1
      ? `the context of ${largest.model.id}`
      : `the largest context among the request's models (${largest.model.id})`
  return {
    ok: false,
    error: new ServiceError(
      'context_too_long',
      `This request's prompt has ${promptTokens} tokens; ${which} is ${largest.model.contextLength} tokens. Shorten the prompt or pick a longer-context model.`,
    ),
  }
}
