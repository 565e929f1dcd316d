/** Everything the hot path needs, built once at boot (see proxy/app.ts) and passed to the stages. */
import type { Sql } from 'postgres'
import type { AdmissionStore } from '../admission/store.ts'
import type { CatalogReads } from '../api/catalog-routes.ts'
import type { Catalog } from '../catalog/catalog.ts'
import type { KeyCache } from '../keys/key-cache.ts'
import type { RecordWriter } from '../ledger/record-writer.ts'
import type { ResponseStore } from '../styles/responses/stored.ts'
import type { Ceiling } from './ceiling.ts'
import type { Inflight } from './inflight.ts'

export type GatewayLimits = {
  upstreamTimeoutMs: number
  streamFirstByteTimeoutMs: number
  streamIdleTimeoutMs: number
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
  limits: GatewayLimits
}
