/**
 * The migration runner: applies the pending `NNNNN_name.sql` files of this folder in order, all in one
 * transaction, under an advisory lock so that concurrent starts apply them once. Forward only; a gap in
 * the numbering, or an applied version this code does not have, stops it with an error.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Sql } from 'postgres'

export type Migration = { version: number; name: string; path: string }

const fileName = /^(\d{5})_([a-z0-9_]+)\.sql$/
/** Advisory lock key of the runner (arbitrary, fixed). */
const LOCK_KEY = 7_300_120_001

export class MigrationError extends Error {}

/** Lists the migration files of a folder and checks that they are numbered 1, 2, 3… without gaps. */
export async function listMigrations(dir: string = import.meta.dir): Promise<Migration[]> {
  const migrations = (await readdir(dir))
    .map((name) => ({ name, match: fileName.exec(name) }))
    .filter((entry) => entry.match)
    .map((entry) => ({
      version: Number(entry.match![1]),
      name: entry.name,
      path: join(dir, entry.name),
    }))
    .sort((a, b) => a.version - b.version)
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new MigrationError(
        `Migration ${String(index + 1).padStart(5, '0')} is missing (found ${migration.name})`,
      )
    }
  })
  return migrations
}

/** Applies pending migrations; returns the names it applied. */
export async function migrate(sql: Sql, dir?: string): Promise<string[]> {
  const migrations = await listMigrations(dir)
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK_KEY})`
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version     integer PRIMARY KEY,
        name        text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now()
      )`
    const applied = await tx<
      { version: number }[]
    >`SELECT version FROM schema_migrations ORDER BY version`
    const latest = applied.at(-1)?.version ?? 0
    if (latest > migrations.length) {
      throw new MigrationError(
        `Database is at migration ${latest}, newer than this code (${migrations.length})`,
      )
    }
    const pending = migrations.slice(latest)
    for (const migration of pending) {
      await tx.unsafe(await Bun.file(migration.path).text())
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`
    }
    return pending.map((migration) => migration.name)
  })
}
