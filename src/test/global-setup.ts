/**
 * Vitest global setup: decides which PostgreSQL the run uses and hands its
 * URL to the test files (`inject('databaseUrl')`, see ./db.ts).
 *  - DATABASE_URL set (CI, developers with a local server): that database;
 *    each test file works in a schema of its own, so nothing else is touched.
 *  - otherwise: an embedded PGlite server in a temporary directory, for this
 *    run only.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { startEmbeddedPostgres } from '@/dev/postgres'
import { quoteIdentifier } from '@/server/db/connection-url'
import { TEST_SCHEMA_PREFIX, testSchemaCreatedAt } from './schema-name'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the test database server (no schema); see createTestDatabase(). */
    databaseUrl: string
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
    project.provide('databaseUrl', configured)
    project.provide('databaseKind', 'postgres')
    return async () => {}
  }

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nft-test-pg-'))
  // Generous: every test file opens a pool or two, some start servers with their own.
  const server = await startEmbeddedPostgres({ dataDir, maxConnections: 200 })
  project.provide('databaseUrl', server.url)
  project.provide('databaseKind', 'pglite')
  return async () => {
    await server.stop()
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
