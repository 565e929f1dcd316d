/** Everything the hot path needs, built once at boot (see proxy/app.ts) and passed to the stages. */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../stores/admission/store.ts'
import type { CatalogReads } from '../policy/catalog-reads.ts'
import type { Catalog } from '../core/catalog/catalog-types.ts'
import type { KeyCache } from '../stores/keys/key-cache.ts'
import type { RecordWriter } from '../stores/ledger/record-writer.ts'
import type { ResponseStore } from '../stores/stored-responses.ts'
import type { InvalidKeyLimits } from '../policy/invalid-keys.ts'
import type { Clock } from '../core/clock.ts'
import type { RouteHealth } from '../providers/route-health.ts'
import type { Ceiling } from './ceiling.ts'
import type { Inflight } from './inflight.ts'

export type GatewayLimits = {
  upstreamTimeoutMs: number
  streamFirstByteTimeoutMs: number
  streamIdleTimeoutMs: number
  /** Streaming: how long one attempt waits for its first bytes while another route is left to try. */
  attemptFirstByteMs: number
  /** Requests on free models per account and UTC day. */
  freeRequestsPerDay: number
  /** IMAGE_COST_DEADLINE_MS: how long an image hold whose outcome is unknown stays open (default 1 hour). */
  imageCostDeadlineMs: number
}

export type Gateway = {
  catalog: Catalog
  sql: Sql
  store: AdmissionStore
  keys: KeyCache
  writer: RecordWriter
  ceiling: Ceiling
  inflight: Inflight
  responses: ResponseStore
  catalogReads: CatalogReads
  health: RouteHealth
  /** Key expiry is checked against it (tests move it to cross a rotation's grace). */
  clock: Clock
  invalidKeys: InvalidKeyLimits
  limits: GatewayLimits
}
