/**
 * Vitest global setup: decides which PostgreSQL the run uses and hands its
 * URL to the test files (`inject('databaseUrl')`, see ./db.ts).
 *  - DATABASE_URL set (CI, developers with a local server): that database;
 *    each test file works in a schema of its own, so nothing else is touched.
 *  - otherwise: embedded PGlite servers in a temporary directory, for this
 *    run only, one per worker (`databaseUrls[VITEST_POOL_ID - 1]`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { quoteIdentifier } from '@/db/connection-url'
import { startEmbeddedPostgres } from '@/dev/postgres'
import { TEST_SCHEMA_PREFIX, testSchemaCreatedAt } from './schema-name'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * Base URLs of the test database servers (no schema); see createTestDatabase().
     * One for DATABASE_URL; one embedded server per Vitest worker otherwise.
     */
    databaseUrls: string[]
    /** 'postgres' for DATABASE_URL, 'pglite' for the embedded server. */
    databaseKind: 'postgres' | 'pglite'
  }
}

/** Schemas left behind by runs that crashed are dropped after this long. */
const STALE_AFTER_MS = 6 * 60 * 60 * 1000

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const configured = process.env.DATABASE_URL
  if (configured) {
    await dropStaleSchemas(configured)
    project.provide('databaseUrls', [configured])
    project.provide('databaseKind', 'postgres')
    return async () => {}
  }

  // PGlite runs one transaction at a time: one server per worker, so a test
  // file that holds a transaction open stalls only itself, not its neighbour.
  const workers = Math.max(1, project.config.maxWorkers)
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nft-test-pg-'))
  const servers = await Promise.all(
    Array.from({ length: workers }, (_, i) =>
      // Generous: every test file opens a pool or two, some start servers with their own.
      startEmbeddedPostgres({ dataDir: path.join(dataDir, String(i + 1)), maxConnections: 200 }),
    ),
  )
  project.provide(
    'databaseUrls',
    servers.map((server) => server.url),
  )
  project.provide('databaseKind', 'pglite')
  return async () => {
    await Promise.all(servers.map((server) => server.stop()))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Also a reachability check: an unreachable DATABASE_URL fails the run here, once, clearly. */
async function dropStaleSchemas(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
  } catch (err) {
    throw new Error(
      `DATABASE_URL is set but the database cannot be reached: ${(err as Error).message || err}`,
    )
  }
  try {
    const { rows } = await client.query<{ nspname: string }>(
      'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)',
      [TEST_SCHEMA_PREFIX],
    )
    const now = Date.now()
    for (const { nspname } of rows) {
      const createdAt = testSchemaCreatedAt(nspname)
      if (createdAt !== undefined && now - createdAt > STALE_AFTER_MS) {
        await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(nspname)} CASCADE`)
      }
    }
  } finally {
    await client.end()
  }
}
