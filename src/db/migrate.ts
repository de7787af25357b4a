/**
 * Applies prisma/migrations/<timestamp>_<name>/migration.sql in order and
 * records each in `_prisma_migrations` exactly as Prisma Migrate does (same
 * table, sha256 checksums, started/finished timestamps), so `prisma migrate
 * deploy` agrees wherever Prisma's schema engine exists. The engine cannot be
 * downloaded offline (docs/design.md, "Installing and running offline"), hence
 * this small replacement.
 *
 * Differences from Prisma, all on the safe side:
 *  - each migration runs in its own transaction, so a failure leaves nothing
 *    half-applied; the failed attempt is recorded with its error in `logs`
 *    and `rolled_back_at` set, which Prisma reads as "not applied, retry";
 *  - an applied migration whose file changed is refused (Prisma's deploy
 *    only warns in `migrate dev`).
 * Migration files must therefore not contain BEGIN/COMMIT or statements that
 * cannot run in a transaction (CREATE INDEX CONCURRENTLY).
 *
 * `npm run db:migrate` runs this file against DATABASE_URL, or the embedded
 * database when it is unset (src/start/with-database.ts).
 */
import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type pg from 'pg'
import type pino from 'pino'
import { createPool } from './client'
import { quoteIdentifier, schemaFromUrl } from './connection-url'
import { sha256Hex } from './sha256'

export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/** Prisma Migrate's advisory lock key: holding it also keeps `prisma migrate` out meanwhile. */
const PRISMA_MIGRATE_LOCK = 72707369

/** Prisma's own definition (schema-engine, postgres flavour), verbatim. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`

export interface MigrateOptions {
  /** Schema to migrate; default the one the URL names, else public. Created when missing. */
  schema?: string
  logger?: pino.Logger
  /** Default prisma/migrations of this repository. */
  migrationsDir?: string
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

interface LocalMigration {
  name: string
  script: string
  checksum: string
}

/** A row of Prisma's _prisma_migrations table. */
export interface MigrationRow {
  id: string
  checksum: string
  finished_at: Date | null
  migration_name: string
  logs: string | null
  rolled_back_at: Date | null
  started_at: Date
  applied_steps_count: number
}

export async function migrate(
  databaseUrl: string,
  options: MigrateOptions = {},
): Promise<{ applied: string[] }> {
  const schema = options.schema ?? schemaFromUrl(databaseUrl) ?? 'public'
  const local = readMigrations(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR)
  const log = options.logger?.child({ schema })
  // Migrations may run long: no statement timeout, whatever the URL says.
  const pool = createPool(databaseUrl, { schema, max: 1, statementTimeoutMs: 0, applicationName: 'migrate' })
  try {
    const client = await pool.connect()
    try {
      await client.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK})`)
      try {
        return { applied: await migrateLocked(client, schema, local, log) }
      } finally {
        // A broken connection has lost the lock already; its error is the one to report.
        await client.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK})`).catch(() => {})
      }
    } finally {
      client.release()
    }
  } finally {
    await pool.end()
  }
}

async function migrateLocked(
  client: pg.PoolClient,
  schema: string,
  local: LocalMigration[],
  log: pino.Logger | undefined,
): Promise<string[]> {
  // One transaction, like each migration below: on PGlite that is what keeps
  // two migrators apart (see applyOne).
  await client.query('BEGIN')
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`)
    await ensureMigrationsTable(client, schema)
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }

  const { rows } = await client.query<MigrationRow>(
    'SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at FROM _prisma_migrations ORDER BY started_at',
  )
  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null)
  if (failed) {
    const reason = failed.logs?.split('\n')[0] ?? 'no log recorded'
    throw new MigrationError(
      `migration ${failed.migration_name} is recorded as failed in ${schema}._prisma_migrations (${reason}); ` +
        `repair the database, then mark it: UPDATE _prisma_migrations SET rolled_back_at = now() WHERE id = '${failed.id}'`,
    )
  }

  const applied = new Map(
    rows.filter((row) => row.rolled_back_at === null).map((row) => [row.migration_name, row]),
  )
  for (const migration of local) {
    const row = applied.get(migration.name)
    if (row && !scriptMatchesChecksum(migration.script, row.checksum)) {
      throw new MigrationError(
        `migration ${migration.name} was changed after it was applied to ${schema} ` +
          `(recorded checksum ${row.checksum}, file ${migration.checksum}); add a new migration instead of editing it`,
      )
    }
  }
  const localNames = new Set(local.map((m) => m.name))
  for (const name of applied.keys()) {
    if (!localNames.has(name))
      log?.warn({ migration: name }, 'applied migration is missing from prisma/migrations')
  }

  const done: string[] = []
  for (const migration of local.filter((m) => !applied.has(m.name))) {
    if (await applyOne(client, migration)) {
      log?.info({ migration: migration.name }, 'applied migration')
      done.push(migration.name)
    }
  }
  if (done.length === 0) log?.debug('database schema is up to date')
  return done
}

async function ensureMigrationsTable(client: pg.PoolClient, schema: string): Promise<void> {
  const { rows } = await client.query<{ tablename: string }>(
    'SELECT tablename FROM pg_tables WHERE schemaname = $1',
    [schema],
  )
  if (rows.some((row) => row.tablename === '_prisma_migrations')) return
  if (rows.length > 0) {
    // As Prisma (P3005): tables made by something else must be baselined by hand first.
    throw new MigrationError(
      `schema ${schema} already has tables (${rows.map((r) => r.tablename).join(', ')}) but no _prisma_migrations; ` +
        'baseline it before migrating',
    )
  }
  await client.query(CREATE_MIGRATIONS_TABLE)
}

/** Applies one migration in a transaction; false when another process applied it meanwhile. */
async function applyOne(client: pg.PoolClient, migration: LocalMigration): Promise<boolean> {
  const id = randomUUID()
  await client.query('BEGIN')
  try {
    // Re-checked inside the transaction: on embedded PGlite all connections share
    // one session, so the advisory lock does not exclude a second migrator there.
    const already = await client.query(
      'SELECT 1 FROM _prisma_migrations WHERE migration_name = $1 AND rolled_back_at IS NULL',
      [migration.name],
    )
    if (already.rowCount) {
      await client.query('COMMIT')
      return false
    }
    await client.query(
      'INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name) VALUES ($1, $2, now(), $3)',
      [id, migration.checksum, migration.name],
    )
    await client.query(migration.script)
    await client.query(
      'UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1 WHERE id = $1',
      [id],
    )
    await client.query('UPDATE _prisma_migrations SET finished_at = clock_timestamp() WHERE id = $1', [id])
    await client.query('COMMIT')
    return true
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    const message = err instanceof Error ? err.message : String(err)
    // Kept for the record, marked rolled back because the transaction undid it all.
    await client
      .query(
        `INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name, logs, rolled_back_at)
         VALUES ($1, $2, now(), $3, $4, now())`,
        [randomUUID(), migration.checksum, migration.name, message],
      )
      .catch(() => {})
    throw new MigrationError(`migration ${migration.name} failed and was rolled back: ${message}`, {
      cause: err,
    })
  }
}

/** Every `<dir>/<name>/migration.sql`, ordered by directory name as Prisma orders them. */
export function readMigrations(migrationsDir: string): LocalMigration[] {
  if (!existsSync(migrationsDir)) throw new MigrationError(`no migrations directory at ${migrationsDir}`)
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter(
      (entry) => entry.isDirectory() && existsSync(path.join(migrationsDir, entry.name, 'migration.sql')),
    )
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const script = readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8')
      return { name, script, checksum: checksumOf(script) }
    })
}

/** The names of the migrations in `migrationsDir`, in order. */
export function migrationNames(migrationsDir: string = DEFAULT_MIGRATIONS_DIR): string[] {
  return readMigrations(migrationsDir).map((m) => m.name)
}

/**
 * Those of `expected` (migration names) that the database behind `pool` has
 * not recorded as applied (readiness, docs/operations.md "Health and
 * readiness"). A database without `_prisma_migrations` lacks them all.
 */
export async function missingMigrations(
  pool: Pick<pg.Pool, 'query'>,
  expected: readonly string[],
): Promise<string[]> {
  let applied: Set<string>
  try {
    const { rows } = await pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    )
    applied = new Set(rows.map((r) => r.migration_name))
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return [...expected] // undefined_table
    throw err
  }
  return expected.filter((name) => !applied.has(name))
}

/** Prisma's checksum: sha256 of the file's text, lowercase hex. */
export function checksumOf(script: string): string {
  return sha256Hex(script)
}

/** As Prisma: a checkout with other line endings (git on Windows) still matches. */
function scriptMatchesChecksum(script: string, checksum: string): boolean {
  return [script, script.replaceAll('\r\n', '\n'), script.replaceAll(/\r?\n/g, '\r\n')].some(
    (variant) => checksumOf(variant) === checksum,
  )
}

async function main(): Promise<void> {
  const { loadConfig } = await import('../config/env')
  const config = loadConfig()
  const url = config.DATABASE_URL
  if (!url) {
    // `npm run db:migrate` sets it (src/start/with-database.ts), the embedded database's included.
    process.stderr.write('db:migrate: DATABASE_URL is not set\n')
    process.exit(1)
  }
  const { createLogger } = await import('../config/logger')
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'migrate' })
  try {
    const { applied } = await migrate(url, { logger })
    logger.info(
      { applied },
      applied.length ? `applied ${applied.length} migration(s)` : 'database schema is up to date',
    )
  } catch (err) {
    process.stderr.write(`db:migrate: ${describeDatabaseError(err)}\n`)
    process.exit(1)
  }
}

/**
 * A migration failure in one line, its code first when the message does not name it (`npm run
 * db:migrate`, `npm start`): pg reports a refused connection as an AggregateError with an
 * empty message.
 */
export function describeDatabaseError(err: unknown): string {
  if (err instanceof AggregateError && err.message === '' && err.errors.length > 0)
    return describeDatabaseError(err.errors[0])
  if (!(err instanceof Error)) return String(err)
  const code = (err as NodeJS.ErrnoException).code
  const message = err.message.replaceAll(/\s*\n\s*/g, ' ').trim()
  if (!message) return code ?? err.name
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await main()
}
