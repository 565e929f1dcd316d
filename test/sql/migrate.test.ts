import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres, { type Sql } from 'postgres'
import type { Database } from '../../proxy/stores/db/database.ts'
import { listMigrations, migrate, MigrationError } from '../../sql/migrate.ts'
import { createTestDatabase, describeWith } from '../helpers/services.ts'
import { rejection } from '../helpers/settle.ts'

describeWith('postgres', 'migration runner', () => {
  let db: Database
  let sql: Sql
  let dir: string
  beforeAll(async () => {
    db = await createTestDatabase()
    dir = await mkdtemp(join(tmpdir(), 'migrations-'))
    // A private schema keeps these tables apart from the service's own (already migrated) tables.
    await db.sql`CREATE SCHEMA runner_test`
    sql = postgres(db.location, {
      max: 2,
      onnotice: () => {},
      connection: { search_path: 'runner_test' },
    })
  })
  afterAll(async () => {
    await sql.end()
    await db.close()
    await rm(dir, { recursive: true, force: true })
  })

  const file = (name: string, body: string) => writeFile(join(dir, name), body)

  test('the project’s migrations are numbered without gaps', async () => {
    const migrations = await listMigrations()
    expect(migrations[0]!.name).toMatch(/^00001_/)
    expect(migrations.map((migration) => migration.version)).toEqual(
      migrations.map((_, index) => index + 1),
    )
  })

  test('pending files apply in order, once', async () => {
    await file('00001_first.sql', 'CREATE TABLE one (id int);')
    await file('00002_second.sql', 'INSERT INTO one VALUES (1); INSERT INTO one VALUES (2);')
    expect(await migrate(sql, dir)).toEqual(['00001_first.sql', '00002_second.sql'])
    expect(await migrate(sql, dir)).toEqual([])
    expect((await sql`SELECT count(*)::int AS n FROM one`)[0]!.n).toBe(2)
  })

  test('all pending files share one transaction: a failure applies none of them', async () => {
    await file('00003_third.sql', 'CREATE TABLE three (id int);')
    await file('00004_broken.sql', 'CREATE TABLE broken (id int; -- syntax error')
    expect(await rejection(migrate(sql, dir))).toBeInstanceOf(Error)
    expect((await sql`SELECT to_regclass('runner_test.three') AS t`)[0]!.t).toBeNull()
    expect((await sql`SELECT max(version)::int AS v FROM schema_migrations`)[0]!.v).toBe(2)
    await rm(join(dir, '00004_broken.sql'))
    await rm(join(dir, '00003_third.sql'))
  })

  test('a gap in the numbering is refused', async () => {
    await file('00005_after_gap.sql', 'SELECT 1;')
    const error = await rejection(listMigrations(dir))
    expect(error).toBeInstanceOf(MigrationError)
    expect(error.message).toBe('Migration 00003 is missing (found 00005_after_gap.sql)')
    await rm(join(dir, '00005_after_gap.sql'))
  })

  test('a database newer than the code is refused', async () => {
    await sql`INSERT INTO schema_migrations (version, name) VALUES (3, '00003_future.sql')`
    expect((await rejection(migrate(sql, dir))).message).toContain(
      'Database is at migration 3, newer than this code (2)',
    )
  })
})
