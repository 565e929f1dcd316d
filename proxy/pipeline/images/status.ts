/**
 * `GET /v1/images/status?request_id=…`: the billing status of an image request, for the account that
 * made it. Another account's request and an unknown ID get the same 404, so IDs reveal nothing.
 *
 * Payload (amounts as decimal-USD strings, times as ISO 8601 UTC):
 *   request_id, status ('pending' | 'charged' | 'failed' | 'released'), model, provider, size, quality,
 *   images (requested), images_returned (null until charged), cost_usd (charged; "0" unless charged),
 *   hold_usd, cost_deadline (when a pending hold is released at the latest), created_at, resolved_at,
 *   error_code (of a failed request)
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import { keyEndpoint } from '../endpoint.ts'
import type { Gateway } from '../gateway.ts'
import { chatErrorBody } from '../styles/chat/render-error.ts'
import { readImageRequest, type ImageRequestRow } from '../../stores/image-requests.ts'

export function imageStatus(
  gw: Gateway,
  request: Request,
  address: () => string,
): Promise<Response> {
  return keyEndpoint(
    gw,
    request,
    { style: 'images', render: () => chatErrorBody, address },
    async (key) => {
      const requestId = new URL(request.url).searchParams.get('request_id')?.trim()
      if (!requestId)
        throw new ServiceError(
          'invalid_request',
          'request_id: is required (the x-request-id of the image request).',
          { param: 'request_id' },
        )
      const row = await readImageRequest(gw.sql, key.accountId, requestId)
      if (!row)
        throw new ServiceError('not_found', `No image request ${requestId} for this account.`)
      return { body: statusPayload(row) }
    },
  )
}

export function statusPayload(row: ImageRequestRow) {
  const [size, quality] = row.variant.split('/')
  return {
    request_id: row.request_id,
    status: row.status,
    model: row.model,
    provider: row.provider,
    size,
    quality,
    images: row.images,
    images_returned: row.images_returned,
    cost_usd: nanoToUsd(row.charged_nano),
    hold_usd: nanoToUsd(row.hold_nano),
    cost_deadline: iso(row.cost_deadline),
    created_at: iso(row.created_at),
    resolved_at: row.resolved_at ? iso(row.resolved_at) : null,
    error_code: row.error_code,
  }
}

const iso = (date: Date) => date.toISOString()
