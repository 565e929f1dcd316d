/**
 * Errors in the Messages style: `{"type": "error", "error": {"type", "message"}, "request_id"}`, with the
 * spec's code as `error.code` (and `error.details` when the refusal has them), so the official SDK raises
 * its typed error classes and the code is readable.
 */
import { errorTable, type ServiceError } from '../../../../shared/errors.ts'

export function messagesErrorBody(error: ServiceError, requestId: string): string {
  return JSON.stringify(messagesError(error, requestId))
}

export function messagesError(error: ServiceError, requestId?: string): Record<string, unknown> {
  return {
    type: 'error',
    error: {
      type: errorTable[error.code].messagesType,
      message: error.message,
      code: error.code,
      ...(error.details.errorDetails ? { details: error.details.errorDetails } : {}),
    },
    ...(requestId ? { request_id: requestId } : {}),
  }
}
