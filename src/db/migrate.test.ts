/**
 * The migrator against the run's real server (DATABASE_URL or embedded
 * PGlite): applies, records `_prisma_migrations` rows as Prisma does, is
 * idempotent and safe to start twice at once, and refuses edited or failed
 * migrations.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { quoteIdentifier, urlWithSchema } from '@/db/connection-url'
import { checksumOf, DEFAULT_MIGRATIONS_DIR, type MigrationRow, migrate, readMigrations } from '@/db/migrate'
import { isEmbeddedTestDatabase, testServerUrl } from '@/test/db'
import { newTestSchemaName } from '@/test/schema-name'

const repoRoot = path.resolve(DEFAULT_MIGRATIONS_DIR, '../..')
const serverUrl = testServerUrl()
const localMigrations = readMigrations(DEFAULT_MIGRATIONS_DIR)
const schemas: string[] = []
const tempDirs: string[] = []

/** A schema name for one test; dropped after it. */
function freshSchema(): { schema: string; url: string } {
  const schema = newTestSchemaName()
  schemas.push(schema)
  return { schema, url: urlWithSchema(serverUrl, schema) }
}

/** A copy of prisma/migrations that a test may edit. */
function migrationsCopy(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'))
  tempDirs.push(dir)
  cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true })
  return dir
}

async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(sql, params)).rows
  } finally {
    await client.end()
  }
}

const rowsOf = (url: string) =>
  query<MigrationRow>(url, 'SELECT * FROM _prisma_migrations ORDER BY started_at, migration_name')

afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

afterAll(async () => {
  for (const schema of schemas)
    await query(serverUrl, `DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`)
})

describe('migrate()', () => {
  it('applies every migration in order and records it as Prisma does', async () => {
    const { schema, url } = freshSchema()
    const { applied } = await migrate(url)
    expect(applied).toEqual(localMigrations.map((m) => m.name))
    expect(applied[0]).toMatch(/^\d{14}_init$/)

    const rows = await rowsOf(url)
    expect(rows.map((r) => r.migration_name)).toEqual(applied)
    for (const row of rows) {
      const file = readFileSync(path.join(DEFAULT_MIGRATIONS_DIR, row.migration_name, 'migration.sql'))
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(row.checksum).toBe(checksumOf(file.toString('utf8')))
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/)
      expect(row.finished_at).toBeInstanceOf(Date)
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime())
      expect(row.applied_steps_count).toBe(1)
      expect(row.logs).toBeNull()
      expect(row.rolled_back_at).toBeNull()
    }

    // The tables landed in the schema the URL names, nowhere else.
    const tables = await query<{ table_schema: string }>(
      url,
      "SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name IN ('collections', '_prisma_migrations')",
    )
    expect(tables.map((t) => t.table_schema)).toContain(schema)
    expect(tables.map((t) => t.table_schema)).not.toContain('public')
  })

  it("creates _prisma_migrations with Prisma's own definition", async () => {
    const { schema, url } = freshSchema()
    await migrate(url)
    const columns = await query(
      url,
      `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1 AND table_name = '_prisma_migrations'
       ORDER BY ordinal_position`,
      [schema],
    )
    expect(columns).toEqual([
      {
        column_name: 'id',
        data_type: 'character varying',
        character_maximum_length: 36,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'checksum',
        data_type: 'character varying',
        character_maximum_length: 64,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'finished_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'migration_name',
        data_type: 'character varying',
        character_maximum_length: 255,
        is_nullable: 'NO',
        column_default: null,
      },
      {
        column_name: 'logs',
        data_type: 'text',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'rolled_back_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'YES',
        column_default: null,
      },
      {
        column_name: 'started_at',
        data_type: 'timestamp with time zone',
        character_maximum_length: null,
        is_nullable: 'NO',
        column_default: 'now()',
      },
      {
        column_name: 'applied_steps_count',
        data_type: 'integer',
        character_maximum_length: null,
        is_nullable: 'NO',
        column_default: '0',
      },
    ])
    const pk = await query(
      url,
      `SELECT a.attname AS column FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
       WHERE i.indrelid = $1::regclass AND i.indisprimary`,
      [`${quoteIdentifier(schema)}._prisma_migrations`],
    )
    expect(pk).toEqual([{ column: 'id' }])
  })

  it('is idempotent', async () => {
    const { url } = freshSchema()
    await migrate(url)
    const before = await rowsOf(url)
    expect(await migrate(url)).toEqual({ applied: [] })
    expect(await rowsOf(url)).toEqual(before)
  })

  it('applies only what is new', async () => {
    const { url } = freshSchema()
    const dir = migrationsCopy()
    await migrate(url, { migrationsDir: dir })
    mkdirSync(path.join(dir, '99990101000000_add_probe'))
    writeFileSync(
      path.join(dir, '99990101000000_add_probe', 'migration.sql'),
      'CREATE TABLE "probe" ("id" INTEGER NOT NULL);\n',
    )
    expect(await migrate(url, { migrationsDir: dir })).toEqual({ applied: ['99990101000000_add_probe'] })
    expect(await query(url, 'SELECT count(*)::int AS n FROM probe')).toEqual([{ n: 0 }])
  })

  it('is safe when several processes start at once', async () => {
    const { url } = freshSchema()
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)])
    const applied = results.flatMap((r) => r.applied).sort()
    expect(applied).toEqual(localMigrations.map((m) => m.name).sort())
    expect((await rowsOf(url)).length).toBe(localMigrations.length)
  })

  it('refuses a migration that was edited after it was applied', async () => {
    const { url } = freshSchema()
    const dir = migrationsCopy()
    await migrate(url, { migrationsDir: dir })
    const first = path.join(dir, localMigrations[0]!.name, 'migration.sql')
    writeFileSync(first, `${readFileSync(first, 'utf8')}\n-- an innocent-looking edit\n`)
    await expect(migrate(url, { migrationsDir: dir })).rejects.toThrow(
      new RegExp(`migration ${localMigrations[0]!.name} was changed after it was applied`),
    )
  })

  it('accepts the same file checked out with CRLF line endings, as Prisma does', async () => {
    const { url } = freshSchema()
    const dir = migrationsCopy()
    await migrate(url, { migrationsDir: dir })
    const first = path.join(dir, localMigrations[0]!.name, 'migration.sql')
    writeFileSync(first, readFileSync(first, 'utf8').replaceAll('\n', '\r\n'))
    expect(await migrate(url, { migrationsDir: dir })).toEqual({ applied: [] })
  })

  it('rolls a failing migration back completely, records the attempt, and retries it once fixed', async () => {
    const { url } = freshSchema()
    const dir = migrationsCopy()
    const broken = path.join(dir, '99990101000000_broken')
    mkdirSync(broken)
    writeFileSync(path.join(broken, 'migration.sql'), 'CREATE TABLE "half" ("id" INTEGER);\nSELECT 1 / 0;\n')
    await expect(migrate(url, { migrationsDir: dir })).rejects.toThrow(
      /migration 99990101000000_broken failed and was rolled back: division by zero/,
    )
    // Earlier migrations stay applied; nothing of the broken one remains.
    expect(await query(url, "SELECT to_regclass('half') AS t")).toEqual([{ t: null }])
    const attempt = (await rowsOf(url)).find((r) => r.migration_name === '99990101000000_broken')
    expect(attempt).toMatchObject({
      finished_at: null,
      applied_steps_count: 0,
      logs: expect.stringMatching(/division by zero/),
    })
    expect(attempt?.rolled_back_at).toBeInstanceOf(Date)

    writeFileSync(path.join(broken, 'migration.sql'), 'CREATE TABLE "half" ("id" INTEGER);\n')
    expect(await migrate(url, { migrationsDir: dir })).toEqual({ applied: ['99990101000000_broken'] })
  })

  it('refuses to go on while a failed migration is recorded', async () => {
    const { url } = freshSchema()
    await migrate(url)
    // What Prisma leaves behind when a migration fails half-way.
    await query(
      url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, logs, applied_steps_count)
       VALUES ('3f1b2c4d-0000-4000-8000-000000000000', $1, '99990101000000_stuck', 'ERROR: relation "x" does not exist', 0)`,
      ['0'.repeat(64)],
    )
    await expect(migrate(url)).rejects.toThrow(
      /migration 99990101000000_stuck is recorded as failed .*relation "x" does not exist/,
    )
  })

  it('refuses a schema whose tables it did not create', async () => {
    const { schema, url } = freshSchema()
    await query(serverUrl, `CREATE SCHEMA ${quoteIdentifier(schema)}`)
    await query(url, 'CREATE TABLE someone_elses (id int)')
    await expect(migrate(url)).rejects.toThrow(
      /already has tables \(someone_elses\) but no _prisma_migrations/,
    )
  })
})

describe('npm run db:migrate', () => {
  const runScript = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/db/migrate.ts'], {
      cwd: repoRoot,
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 60_000,
    })

  it('migrates the database DATABASE_URL names, schema included', async () => {
    const { url } = freshSchema()
    const result = runScript({ DATABASE_URL: url })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect((await rowsOf(url)).length).toBe(localMigrations.length)
  })

  it('exits non-zero with one line when the database is unreachable', () => {
    // Port 1 on loopback: nothing listens there.
    const result = runScript({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres' })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^db:migrate: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
  })

  it('exits non-zero with one line without DATABASE_URL', () => {
    const result = runScript({ DATABASE_URL: '' })
    expect(result.status).toBe(1)
    expect(result.stderr).toBe('db:migrate: DATABASE_URL is not set\n')
  })

  it.skipIf(isEmbeddedTestDatabase())('holds Prisma Migrate’s advisory lock while it works', async () => {
    // Another session holding Prisma's lock (as `prisma migrate deploy` would) makes migrate() wait.
    const { url } = freshSchema()
    const holder = new pg.Client({ connectionString: serverUrl })
    await holder.connect()
    try {
      await holder.query('SELECT pg_advisory_lock(72707369)')
      let finished = false
      const running = migrate(url).then(() => {
        finished = true
      })
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(finished).toBe(false)
      await holder.query('SELECT pg_advisory_unlock(72707369)')
      await running
      expect(finished).toBe(true)
    } finally {
      await holder.end()
    }
  })
})
