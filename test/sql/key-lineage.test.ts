// Migration 16 gives every key the first key of its rotation lineage (`limits_key_id`): keys rotated
// before it, along their chain of replacements; keys inserted after it, themselves unless a rotation
// names the lineage.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres, { type Sql } from 'postgres'
import type { Database } from '../../proxy/stores/db/database.ts'
import { listMigrations, migrate } from '../../sql/migrate.ts'
import { createTestDatabase, describeWith } from '../helpers/services.ts'

const LINEAGE_VERSION = 16

describeWith('postgres', 'key lineage migration', () => {
  let db: Database
  let sql: Sql
  let dir: string
  beforeAll(async () => {
    db = await createTestDatabase()
    dir = await mkdtemp(join(tmpdir(), 'lineage-'))
    // A private schema holds the project's tables as they were before the lineage.
    await db.sql`CREATE SCHEMA lineage_test`
    sql = postgres(db.location, {
      max: 1,
      onnotice: () => {},
      connection: { search_path: 'lineage_test' },
    })
  })
  afterAll(async () => {
    await sql.end()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const copy = async (versions: (version: number) => boolean) => {
    for (const migration of await listMigrations())
      if (versions(migration.version)) await copyFile(migration.path, join(dir, migration.name))
  }
  const key = (id: string, replacedBy: string | null) => sql`
    INSERT INTO api_keys (id, account_id, prefix, key_hash, replaced_by)
    VALUES (${id}, 'acct_1', ${id.padEnd(14, 'x').slice(0, 14)}, ${Buffer.alloc(32, id)}, ${replacedBy})`

  test('rotated keys follow their chain to its first key; others are their own; new keys too', async () => {
    await copy((version) => version < LINEAGE_VERSION)
    await migrate(sql, dir)
    await sql`INSERT INTO accounts (id) VALUES ('acct_1')`
    // a → b → c, rotated before the migration; d never rotated.
    await key('key_c', null)
    await key('key_b', 'key_c')
    await key('key_a', 'key_b')
    await key('key_d', null)

    await copy((version) => version >= LINEAGE_VERSION)
    expect((await migrate(sql, dir)).length).toBeGreaterThan(0)
    const lineage = async () =>
      Object.fromEntries(
        (
          await sql<{ id: string; limits_key_id: string }[]>`
            SELECT id, limits_key_id FROM api_keys ORDER BY id`
        ).map((row) => [row.id, row.limits_key_id]),
      )
    expect(await lineage()).toEqual({
      key_a: 'key_a',
      key_b: 'key_a',
      key_c: 'key_a',
      key_d: 'key_d',
    })

    await key('key_e', null)
    await sql`
      INSERT INTO api_keys (id, account_id, prefix, key_hash, limits_key_id)
      VALUES ('key_f', 'acct_1', 'key_fxxxxxxxxx', ${Buffer.alloc(32, 'f')}, 'key_a')`
    expect(await lineage()).toMatchObject({ key_e: 'key_e', key_f: 'key_a' })
  })
})
