/** The Chat Completions client style (`/v1/chat/completions`), native to OpenAI-compatible providers. */
import type { ChatRequest } from '../../../../shared/schemas/chat.ts'
import { setDefault } from '../../../policy/routing/presets.ts'
import type { ClientStyle } from '../client-style.ts'
import { chatPassthroughAnswer, renderChatAnswer } from './answer.ts'
import { chatEnvelope } from './envelope.ts'
import { measureChatPrompt } from './prompt.ts'
import { chatErrorBody } from './render-error.ts'
import { chatPassthroughStream, chatStreamOutput } from './stream.ts'
import { chatTexts, chatUsesTools } from './texts.ts'
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
  fallbacksField: 'models',
  outputLimitField: 'max_completion_tokens',
  providerPrefs: (body) => body.provider,
  applyDefaults(body, params) {
    setDefault(body, 'temperature', params.temperature)
    setDefault(body, 'top_p', params.top_p)
    if (body.max_tokens == null) setDefault(body, 'max_completion_tokens', params.max_tokens)
    setDefault(body, 'stop', params.stop)
  },
  usesTools: chatUsesTools,
  texts: chatTexts,
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
