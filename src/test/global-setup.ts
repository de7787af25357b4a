/**
 * Vitest global setup: decides which PostgreSQL the run uses and hands its
 * URL to the test files (`inject('databaseUrl')`, see ./db.ts).
 *  - DATABASE_URL set (CI, developers with a local server): a database of the
 *    run's own on that server (./scratch-database.ts), dropped at the end;
 *    each test file works in a schema of its own inside it.
 *  - otherwise: embedded PGlite servers in a temporary directory, for this
 *    run only, one per worker (`databaseUrls[VITEST_POOL_ID - 1]`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { startEmbeddedPostgres } from '@/dev/postgres'
import { createScratchDatabase } from './scratch-database'

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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const configured = process.env.DATABASE_URL
  if (configured) {
    const database = await createScratchDatabase(configured, 'nft_unit')
    project.provide('databaseUrls', [database.url])
    project.provide('databaseKind', 'postgres')
    return () => database.drop()
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
