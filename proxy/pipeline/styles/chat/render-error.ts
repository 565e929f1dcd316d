/**
 * Errors in the Chat Completions style (also used by the Responses style): an OpenAI-shaped body
 * `{"error": {"message", "type", "param", "code"}}`, with the spec's code in `code`, so the official SDKs
 * raise their typed error classes with the code readable.
 */
import { errorTable, type ServiceError } from '../../../../shared/errors.ts'

export function chatErrorBody(error: ServiceError): string {
  return JSON.stringify({
    error: {
      message: error.message,
      type: errorTable[error.code].openaiType,
      param: error.details.param ?? null,
      code: error.code,
    },
  })
}
