/** The Chat Completions client style (`/v1/chat/completions`), native to OpenAI-compatible providers. */
import type { ChatRequest } from '../../../shared/schemas/chat.ts'
import type { ClientStyle } from '../client-style.ts'
import { chatPassthroughAnswer, renderChatAnswer } from './answer.ts'
import { chatEnvelope } from './envelope.ts'
import { measureChatPrompt } from './prompt.ts'
import { chatErrorBody } from './render-error.ts'
import { chatPassthroughStream, chatStreamOutput } from './stream.ts'
import { chatConversation } from './to-conversation.ts'

export const chatStyle: ClientStyle<ChatRequest> = {
  name: 'chat',
  envelope: chatEnvelope,
  allowXApiKey: false,
  errorBody: chatErrorBody,
  headers: () => ({}),
  requested: (body) => ({
    model: body.model,
    fallbacks: body.models ?? [],
    stream: body.stream === true,
    outputTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
  }),
  measure: measureChatPrompt,
  conversation: chatConversation,
  renderAnswer: renderChatAnswer,
  streamOutput: chatStreamOutput,
  passthrough: {
    provider: 'openai',
    body: ({ models: _models, provider: _provider, ...rest }) => rest,
    answer: chatPassthroughAnswer,
    stream: chatPassthroughStream,
  },
}
