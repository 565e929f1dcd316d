/**
 * Guardrails for operators: create, edit, list and delete an account's guardrails (an allowed-model list,
 * a monthly budget across the keys assigned to it, and content filters). Filters are compiled when saved,
 * so a stored guardrail always compiles. A guardrail loads with the key record of every key it is
 * assigned to: every edit invalidates the account's cached keys, and moves `updated_at`, which versions
 * the compiled filters cached in each process.
 */
import { ServiceError } from '../../../shared/errors.ts'
import { nanoToUsd } from '../../../shared/money.ts'
import {
  GUARDRAIL_LABELS,
  GUARDRAIL_NAME,
  nothingToChange,
} from '../../../shared/schemas/admin/field-rules.ts'
import type { OperatorDeps } from '../operator-deps.ts'
import { compileFilters, FilterError } from '../../policy/guardrails/detectors.ts'
import { randomBase58 } from '../../core/api-key.ts'
import { checkModelIds } from './allowlists.ts'
import { liveSnapshot } from '../../stores/admission/load-account.ts'

export const newGuardrailId = () => `grd_${randomBase58(16)}`

export type GuardrailInput = {
  name: string
  /** Allowed model IDs; null or absent: any. */
  models?: string[] | null
  /** Monthly budget across the guardrail's keys; null or absent: none. */
  budgetNano?: number | null
  filters?: unknown[]
}

export type GuardrailChanges = Partial<GuardrailInput>

export type GuardrailView = {
  id: string
  accountId: string
  name: string
  models: string[] | null
  budgetNano: number | null
  budgetUsd: string | null
  filters: unknown[]
  /** Keys the guardrail is assigned to. */
  keyIds: string[]
  createdAt: string
  updatedAt: string
}

type Row = {
  id: string
  account_id: string
  name: string
  allowed_models: string[] | null
  budget_nano: number | null
  filters: unknown[]
  key_ids: string[] | null
  created_at: Date
  updated_at: Date
}

export async function createGuardrail(
  deps: OperatorDeps,
  accountId: string,
  input: GuardrailInput,
): Promise<GuardrailView> {
  const columns = checkChanges(deps, input)
  const [account] = await deps.sql`SELECT 1 FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  const id = newGuardrailId()
  // No key refers to a new guardrail yet, so no cached key record changes.
  const [row] = await named(
    columns.name!,
    deps.sql<Row[]>`
      INSERT INTO guardrails (id, account_id, name, allowed_models, budget_nano, filters)
      VALUES (${id}, ${accountId}, ${columns.name!}, ${columns.allowed_models ?? null}, ${columns.budget_nano ?? null},
              ${deps.sql.json((columns.filters ?? []) as never)})
      RETURNING *, ARRAY[]::text[] AS key_ids`,
  )
  return view(row!)
}

export async function updateGuardrail(
  deps: OperatorDeps,
  guardrailId: string,
  changes: GuardrailChanges,
): Promise<GuardrailView> {
  const columns = checkChanges(deps, changes)
  if (Object.keys(columns).length === 0) {
    throw new ServiceError('invalid_request', nothingToChange(Object.values(GUARDRAIL_LABELS)))
  }
  const values: Record<string, unknown> = { ...columns }
  if (columns.filters) values.filters = deps.sql.json(columns.filters as never)
  // updated_at versions the compiled filters: it must move on every edit, even two within one millisecond.
  const [row] = await named(
    columns.name,
    deps.sql<Row[]>`
      UPDATE guardrails SET ${deps.sql(values)}, updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
      WHERE id = ${guardrailId}
      RETURNING *, ARRAY(SELECT k.id FROM api_keys k WHERE k.guardrail_id = guardrails.id ORDER BY k.created_at) AS key_ids`,
  )
  if (!row) throw new ServiceError('not_found', `No guardrail ${guardrailId}.`)
  await deps.keys.invalidate({ accountId: row.account_id })
  return view(row)
}

export async function listGuardrails(
  deps: OperatorDeps,
  accountId: string,
): Promise<{ guardrails: GuardrailView[] }> {
  const [account] = await deps.sql`SELECT 1 FROM accounts WHERE id = ${accountId}`
  if (!account) throw new ServiceError('not_found', `No account ${accountId}.`)
  const rows = await deps.sql<Row[]>`
    SELECT g.*, ARRAY(SELECT k.id FROM api_keys k WHERE k.guardrail_id = g.id ORDER BY k.created_at) AS key_ids
    FROM guardrails g WHERE g.account_id = ${accountId} ORDER BY g.name`
  // What each budget counts now; the list still answers without the store.
  const live = await liveSnapshot(deps.sql, deps.store, accountId).catch(() => undefined)
  const counted = new Map(live?.guardrails.map((guardrail) => [guardrail.guardrailId, guardrail]))
  return {
    guardrails: rows.map((row) => {
      if (!live) return view(row)
      const spent = counted.get(row.id)
      const month = (spent?.monthSpentNano ?? 0) + (spent?.heldNano ?? 0)
      return { ...view(row), budgetUsed: { monthNano: month, monthUsd: nanoToUsd(month) } }
    }),
  }
}

/** Deletes a guardrail after unassigning it from its keys (they keep working, without it). */
export async function deleteGuardrail(
  deps: OperatorDeps,
  guardrailId: string,
): Promise<{ id: string; deleted: true; unassignedKeyIds: string[] }> {
  const result = await deps.sql.begin(async (tx) => {
    // Locked first, so a concurrent assignment to a key (which reads it FOR SHARE) waits or fails cleanly.
    const [guardrail] = await tx<
      { account_id: string }[]
    >`SELECT account_id FROM guardrails WHERE id = ${guardrailId} FOR UPDATE`
    if (!guardrail) return undefined
    const keys = await tx<
      { id: string }[]
    >`UPDATE api_keys SET guardrail_id = NULL WHERE guardrail_id = ${guardrailId} RETURNING id`
    await tx`DELETE FROM guardrails WHERE id = ${guardrailId}`
    return { accountId: guardrail.account_id, keyIds: keys.map((key) => key.id) }
  })
  if (!result) throw new ServiceError('not_found', `No guardrail ${guardrailId}.`)
  await deps.keys.invalidate({ accountId: result.accountId })
  return { id: guardrailId, deleted: true, unassignedKeyIds: result.keyIds }
}

type Columns = {
  name?: string
  allowed_models?: string[] | null
  budget_nano?: number | null
  filters?: unknown[]
}

/** The checked column values of the fields given (absent fields stay absent). */
function checkChanges(deps: OperatorDeps, input: GuardrailChanges): Columns {
  const columns: Columns = {}
  if (input.name !== undefined) {
    const name = input.name.trim()
    if (name.length < GUARDRAIL_NAME.minLength || name.length > GUARDRAIL_NAME.maxLength) {
      throw new ServiceError(
        'invalid_request',
        `${GUARDRAIL_LABELS.name} must be ${GUARDRAIL_NAME.minLength} to ${GUARDRAIL_NAME.maxLength} characters.`,
        { param: 'name' },
      )
    }
    columns.name = name
  }
  if (input.models !== undefined)
    columns.allowed_models = checkModelIds(deps.catalog, input.models, 'models')
  if (input.budgetNano !== undefined) {
    if (
      input.budgetNano !== null &&
      (!Number.isSafeInteger(input.budgetNano) || input.budgetNano <= 0)
    ) {
      throw new ServiceError(
        'invalid_request',
        `${GUARDRAIL_LABELS.budgetNano} must be more than 0, or none (null) for no budget.`,
        { param: 'budgetNano' },
      )
    }
    columns.budget_nano = input.budgetNano
  }
  if (input.filters !== undefined) {
    try {
      compileFilters(input.filters)
    } catch (error) {
      if (error instanceof FilterError)
        throw new ServiceError('invalid_request', error.message, { param: 'filters' })
      throw error
    }
    columns.filters = input.filters
  }
  return columns
}

/** Runs a write, turning the unique (account, name) violation into a refusal naming the field. */
async function named<T>(name: string | undefined, query: Promise<T>): Promise<T> {
  try {
    return await query
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ServiceError(
        'invalid_request',
        `${GUARDRAIL_LABELS.name}: the account already has a guardrail named "${name}".`,
        { param: 'name' },
      )
    }
    throw error
  }
}

function view(row: Row): GuardrailView {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    models: row.allowed_models,
    budgetNano: row.budget_nano,
    budgetUsd: row.budget_nano === null ? null : nanoToUsd(row.budget_nano),
    filters: row.filters,
    keyIds: row.key_ids ?? [],
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }
}
