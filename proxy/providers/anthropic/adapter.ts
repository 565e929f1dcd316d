/** The Anthropic provider style (Messages at `baseUrl/v1/messages`). */
import type { ProviderAdapter } from '../adapter.ts'
import { failureFromStatus, readErrorBody } from '../upstream-failure.ts'
import { messagesUpstreamRequest } from './messages-request.ts'
import { readMessagesAnswer } from './read-answer.ts'
import { messagesStreamDecoder } from './stream-decoder.ts'

/** No Messages-style error type means a content-policy rejection: the style refuses with a `refusal` stop reason. */
const policyTypes = new Set<string>()

export const anthropicAdapter: ProviderAdapter = {
  request: messagesUpstreamRequest,
  readAnswer: readMessagesAnswer,
  streamDecoder: messagesStreamDecoder,
  failure: (providerId, status, body) =>
    failureFromStatus(providerId, status, readErrorBody(body, policyTypes)),
}
