/**
 * Image requests in Postgres (`image_requests`) and their billing status. A row is written pending
 * before the provider is called and ends exactly once; every transition below starts from pending, so
 * a late or repeated one changes nothing:
 *
 *   pending → charged    the provider returned images; the charge (≤ the hold) is in the ledger
 *   pending → failed     the provider answered with an error or could not be reached; hold released
 *   pending → released   the outcome stayed unknown; the hold expired at the cost deadline, nothing charged
 */
import type { Sql } from 'postgres'

export type ImageStatus = 'pending' | 'charged' | 'failed' | 'released'

export type NewImageRequest = {
  requestId: string
  accountId: string
  keyId: string
  model: string
  provider: string
  images: number
  /** "<size>/<quality>", the priced variant. */
  variant: string
  holdNano: number
  costDeadline: Date
}

export type ImageRequestRow = {
  request_id: string
  model: string
  provider: string | null
  images: number
  images_returned: number | null
  variant: string
  hold_nano: number
  charged_nano: number
  status: ImageStatus
  error_code: string | null
  cost_deadline: Date
  created_at: Date
  resolved_at: Date | null
}

/** A pending row past its cost deadline by this much lost its sweep (a process stopped): it is ended from the ledger. */
const OVERDUE_AFTER = '10 minutes'

export async function insertImageRequest(sql: Sql, row: NewImageRequest): Promise<void> {
  await sql`
    INSERT INTO image_requests (request_id, account_id, key_id, model, provider, images, variant, hold_nano, status, cost_deadline)
    VALUES (${row.requestId}, ${row.accountId}, ${row.keyId}, ${row.model}, ${row.provider}, ${row.images}, ${row.variant},
            ${row.holdNano}, 'pending', ${row.costDeadline})`
}

export async function markCharged(
  sql: Sql,
  requestId: string,
  provider: string,
  imagesReturned: number,
  chargedNano: number,
): Promise<void> {
  await sql`
    UPDATE image_requests
    SET status = 'charged', provider = ${provider}, images_returned = ${imagesReturned}, charged_nano = ${chargedNano}, resolved_at = now()
    WHERE request_id = ${requestId} AND status = 'pending'`
}

export async function markFailed(
  sql: Sql,
  requestId: string,
  provider: string | null,
  errorCode: string,
): Promise<void> {
  await sql`
    UPDATE image_requests
    SET status = 'failed', provider = COALESCE(${provider}, provider), error_code = ${errorCode}, resolved_at = now()
    WHERE request_id = ${requestId} AND status = 'pending'`
}

/** The provider that was being called when the outcome became unknown. */
export async function markProvider(sql: Sql, requestId: string, provider: string): Promise<void> {
  await sql`UPDATE image_requests SET provider = ${provider} WHERE request_id = ${requestId} AND status = 'pending'`
}

/**
 * After a sweep: requests whose holds expired are released (an expired hold charged nothing). Rows whose
 * sweep result was lost are ended from the ledger once well past their deadline: charged if a charge for
 * the request is there (its status update was lost), released otherwise. Returns the rows ended.
 */
export async function endExpiredImageRequests(
  sql: Sql,
  expiredRequestIds: string[],
): Promise<number> {
  let released = 0
  if (expiredRequestIds.length > 0) {
    const rows = await sql`
      UPDATE image_requests SET status = 'released', resolved_at = now()
      WHERE request_id = ANY(${expiredRequestIds}::text[]) AND status = 'pending'`
    released = rows.count
  }
  const overdue = await sql`
    UPDATE image_requests AS row
    SET status = CASE WHEN charge.amount_nano IS NULL THEN 'released' ELSE 'charged' END,
        charged_nano = COALESCE(-charge.amount_nano, 0),
        resolved_at = now()
    FROM image_requests AS pending
    LEFT JOIN ledger AS charge ON charge.request_id = pending.request_id AND charge.kind = 'charge'
    WHERE row.request_id = pending.request_id AND pending.status = 'pending'
      AND pending.cost_deadline < now() - ${OVERDUE_AFTER}::interval`
  return released + overdue.count
}

/** The request of this account, or undefined (another account's request is not found either). */
export async function readImageRequest(
  sql: Sql,
  accountId: string,
  requestId: string,
): Promise<ImageRequestRow | undefined> {
  const [row] = await sql<ImageRequestRow[]>`
    SELECT request_id, model, provider, images, images_returned, variant, hold_nano, charged_nano, status, error_code,
           cost_deadline, created_at, resolved_at
    FROM image_requests WHERE request_id = ${requestId} AND account_id = ${accountId}`
  return row
}
