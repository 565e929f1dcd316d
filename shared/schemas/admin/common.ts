/**
 * The pieces every admin API schema is made of: a nullable value, a count, the query of a keyset-paged
 * list and a time range. One definition each, so every list pages and filters by time the same way.
 */
import { Type, type SchemaOptions, type TSchema } from '@sinclair/typebox'

/** A value or null; `options` (a title) belong to the whole, which is what a refusal reports. */
export const Nullable = <T extends TSchema>(schema: T, options?: SchemaOptions) =>
  Type.Union([schema, Type.Null()], options)

export const Count = Type.Integer({ minimum: 0 })

/** An ISO 8601 time in a query string. */
const QueryTime = Type.String({ minLength: 1, maxLength: 40 })

/** The query of a list read newest first, a page at a time. */
export const pageQuery = {
  /** At most this many: a whole number 1–200 (default 50). A query string carries text. */
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  /** `nextBefore` of the previous page: continue with older entries. */
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}

/** Only what happened at or after `from` and before `to`. */
export const timeRangeQuery = {
  /** At or after this time (ISO 8601). */
  from: Type.Optional(QueryTime),
  /** Before this time (ISO 8601, exclusive). */
  to: Type.Optional(QueryTime),
}
