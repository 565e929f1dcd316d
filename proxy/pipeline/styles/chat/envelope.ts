/** The Chat Completions envelope: the shared schema plus the rules between fields a schema cannot say. */
import { ServiceError } from '../../../../shared/errors.ts'
import { ChatRequest, chatRequestFields } from '../../../../shared/schemas/chat.ts'
import { envelope } from '../../validate.ts'

export const chatEnvelope = envelope<ChatRequest>(ChatRequest, chatRequestFields, (body) => {
  if (body.stream_options && body.stream !== true) {
    return new ServiceError('invalid_request', 'stream_options: only allowed when stream is true', {
      param: 'stream_options',
    })
  }
  // An assistant message may say what it was by its calls, its refusal or its audio instead.
  const index = body.messages.findIndex(
    (message) =>
      message.content === undefined &&
      !['tool_calls', 'function_call', 'refusal', 'audio'].some((field) => field in message),
  )
  if (index >= 0)
    return new ServiceError('invalid_request', `messages[${index}].content: is required`, {
      param: `messages[${index}].content`,
    })
  return undefined
})
