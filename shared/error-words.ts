/**
 * What each error code means to a person, for the dashboard: a short title beside the server's own
 * message (which names the field, the limit or the rule). Keyed by the error table, so a new code
 * without words fails the type check.
 */
import type { ErrorCode } from './errors.ts'

export const errorWords: Record<ErrorCode, string> = {
  invalid_request: 'Something in the form is not right',
  context_too_long: 'The conversation is too long for this model',
  provider_policy_rejected: "The provider's policy refused this request",
  invalid_api_key: 'This key does not work',
  insufficient_credits: 'Not enough credit',
  trial_exhausted: 'Your free messages are used up',
  model_not_allowed: 'This model is not allowed here',
  spend_limit_exceeded: 'A spend limit was reached',
  guardrail_blocked: 'A guardrail blocked this',
  account_suspended: 'This account is suspended',
  unknown_model: 'No such model',
  request_in_progress: 'Another request is still running',
  payload_too_large: 'Too large',
  free_quota_exceeded: 'The free allowance is used up for now',
  usage_limit_exceeded: 'Too many requests right now',
  upstream_error: 'The model provider failed',
  image_request_failed: 'The image could not be made',
  admission_unconfirmed: 'The service could not confirm your balance in time',
  model_alias_unavailable: 'This model name leads nowhere right now',
  model_unavailable: 'The model is unavailable right now',
  no_available_route: 'No provider can serve this model right now',
  upstream_rate_limited: 'The provider is busy',
  auto_unresolvable: 'No model fits this request',
  upstream_response_invalid: 'The provider sent a broken answer',
  images_unavailable: 'Images are unavailable right now',
  upstream_capacity_unavailable: 'The provider is paused',
  overloaded: 'The service is busy',
  request_timeout: 'The request took too long',
  not_found: 'Not found',
  unauthorized: 'You are signed out',
  forbidden: 'Not allowed',
  conflict: 'That conflicts with the current state',
  internal_error: 'Something went wrong on our side',
}
