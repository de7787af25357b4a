/**
 * A fresh, migrated database for one test file (or test):
 *
 *   const db = await createTestDatabase()
 *   … db.prisma / db.pool / db.url …
 *   await db.drop()
 *
 * Each call makes a new schema `test_<time>_<random>` on the run's server
 * (see ./global-setup.ts), applies every migration into it with the real
 * migrator, and returns clients bound to it. `url` carries the schema in the
 * `options` startup parameter (`?options=-c search_path=<schema>,public`), so
 * anything given only the URL — createPool, plain pg, psql, a child process
 * running the indexer or the web server — lands in the same schema.
 */
import pg from 'pg'
import { inject } from 'vitest'
import { createPool, createPrisma } from '@/db/client'
import { quoteIdentifier, urlWithSchema } from '@/db/connection-url'
import type { PrismaClient } from '@/db/generated/client'
import { migrate } from '@/db/migrate'
import { newTestSchemaName } from './schema-name'

export interface TestDatabase {
  /** Connection URL bound to `schema`. */
  url: string
  schema: string
  pool: pg.Pool
  prisma: PrismaClient
  /** Drops the schema with everything in it and ends `pool` and `prisma`. */
  drop(): Promise<void>
}

/** This worker's server, without a schema; DATABASE_URL outside Vitest. */
export function testServerUrl(): string {
  const url = process.env.VITEST ? workerServerUrl(inject('databaseUrls')) : process.env.DATABASE_URL
  if (!url)
    throw new Error('no test database: run under Vitest (src/test/vitest.config.ts) or set DATABASE_URL')
  return url
}

/** Whether the run uses the embedded PGlite server (some PostgreSQL features differ there). */
export function isEmbeddedTestDatabase(): boolean {
  return process.env.VITEST ? inject('databaseKind') === 'pglite' : false
}

function workerServerUrl(urls: string[]): string | undefined {
  const worker = Number(process.env.VITEST_POOL_ID ?? 1)
  return urls[(Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % urls.length]
}

export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const serverUrl = testServerUrl()
  const schema = newTestSchemaName()
  const url = urlWithSchema(serverUrl, schema)
  await migrate(url)
  const pool = createPool(url, { max: options.poolSize ?? 5, applicationName: schema })
  const prisma = createPrisma(pool)
  let dropped: Promise<void> | undefined
  return {
    url,
    schema,
    pool,
    prisma,
    drop() {
      dropped ??= (async () => {
        await prisma.$disconnect()
        await pool.end()
        await dropSchema(serverUrl, schema)
      })()
      return dropped
    },
  }
}

async function dropSchema(serverUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`)
    // The webhook job queue's schema beside it (docs/push.md, "Where delivery runs").
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(`${schema}_pgboss`)} CASCADE`)
  } finally {
    await client.end()
  }
}
