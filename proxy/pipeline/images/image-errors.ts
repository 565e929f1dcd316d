/**
 * What an image request that produced no images tells the client. A provider's error status means
 * nothing was generated: the client's own mistakes (content policy, invalid parameters) keep their 400,
 * a provider's rate limit is 503 `upstream_rate_limited` with its wait (retrying later can only help),
 * everything else is 502 `image_request_failed`. An unknown outcome is 502 too, and says where the final
 * cost will appear and until when the hold stays.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import {
  failureFromStatus,
  readErrorBody,
  withProviderWait,
} from '../../providers/upstream-failure.ts'
import type { ImageOutcome } from '../../providers/image-upstream.ts'

/** Error codes OpenAI-style providers use for a prompt their moderation refused. */
const policyCodes = new Set(['content_policy_violation', 'moderation_blocked', 'content_filter'])

/** Refusals that are about the request itself: retrying unchanged cannot help, and the provider's words say why. */
const clientFault = new Set(['provider_policy_rejected', 'invalid_request', 'payload_too_large'])

export const statusHint = (requestId: string) => `GET /v1/images/status?request_id=${requestId}`

export function imageFailure(
  requestId: string,
  outcome: Extract<ImageOutcome, { kind: 'refused' | 'unreachable' }>,
): ServiceError {
  if (outcome.kind === 'unreachable') {
    return new ServiceError(
      'images_unavailable',
      `Image requests are unavailable: no provider could be reached (${outcome.detail}). Nothing was sent or charged.`,
    )
  }
  const provider = outcome.route.provider.id
  const failure = failureFromStatus(
    provider,
    outcome.status,
    readErrorBody(outcome.body, policyCodes),
  )
  const mapped = failure.error
  if (mapped.code === 'upstream_rate_limited') {
    const waited = withProviderWait(failure, outcome.headers).error
    return new ServiceError(
      mapped.code,
      `${mapped.message} No image was generated; nothing was charged.`,
      waited.details,
    )
  }
  if (clientFault.has(mapped.code))
    return new ServiceError(
      mapped.code,
      `${mapped.message} No image was generated; nothing was charged.`,
    )
  return new ServiceError(
    'image_request_failed',
    `Provider ${provider} failed the image request (status ${outcome.status}); no image was generated and nothing was charged. ` +
      `Its status: ${statusHint(requestId)}. Images are never regenerated automatically.`,
  )
}

export function unknownOutcome(
  requestId: string,
  outcome: Extract<ImageOutcome, { kind: 'unknown' }>,
  holdNano: number,
  deadline: Date,
): ServiceError {
  return new ServiceError(
    'image_request_failed',
    `Provider ${outcome.route.provider.id} ${outcome.reason}; the images may have been generated, and the final cost is not known yet. ` +
      `Up to $${nanoToUsd(holdNano)} stays held until ${deadline.toISOString().replace(/\.\d{3}Z$/, 'Z')}. ` +
      `Check ${statusHint(requestId)}. Images are never regenerated automatically.`,
  )
}
