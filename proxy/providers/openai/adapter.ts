/** The OpenAI-compatible provider style (Chat Completions at `baseUrl/chat/completions`). */
import type { ProviderAdapter } from '../adapter.ts'
import { failureFromStatus, readErrorBody } from '../upstream-failure.ts'
import { chatUpstreamRequest } from './chat-request.ts'
import { readChatAnswer } from './read-answer.ts'
import { chatStreamDecoder } from './stream-decoder.ts'

const policyCodes = new Set(['content_policy_violation', 'content_filter', 'moderation_blocked'])

export const openaiAdapter: ProviderAdapter = {
  request: chatUpstreamRequest,
  readAnswer: readChatAnswer,
  streamDecoder: chatStreamDecoder,
  failure: (providerId, status, body) =>
    failureFromStatus(providerId, status, readErrorBody(body, policyCodes)),
}
