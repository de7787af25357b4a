/**
 * The shared Vitest configuration (`npm run test:unit`). Test files run in
 * parallel, each in its own PostgreSQL schema (src/test/db.ts), against
 * DATABASE_URL when set (CI) or an embedded PGlite server started once for
 * the run (src/test/global-setup.ts).
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The files that take a minute or more (most of it waiting on timers, child processes and
 * chains): started first, so that none is left to run alone at the end of the run. Vitest
 * orders by the durations it kept from the last run, which a fresh checkout does not have.
 */
const LONG_FILES = [
  'src/indexer/test/metadata-fairness.test.ts',
  'src/indexer/sync/consecutive-budget.test.ts',
  'src/indexer/test/providers.test.ts',
  'src/indexer/test/metadata-freshness.test.ts',
  'src/start/start.test.ts',
  'src/indexer/test/crash.test.ts',
  'src/indexer/test/providers-endpoints.test.ts',
  'src/dev/devnet/devnet.test.ts',
]

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONG_FILES.indexOf(path.relative(root, file.moduleId))
      return at === -1 ? LONG_FILES.length : at
    }
    // A stable sort: the rest keep Vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  root,
  resolve: {
    alias: [
      // The client's source, not the build its package.json points at (docs/client.md "The package").
      { find: /^@\/client$/, replacement: path.join(root, 'src/client/index.ts') },
      { find: '@', replacement: path.join(root, 'src') },
    ],
  },
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'],
    globalSetup: ['src/test/global-setup.ts'],
    // Child processes, not threads: tests start servers, anvil and PGlite (WASM),
    // and a crash in one file must not take the others down.
    pool: 'forks',
    // These machines have 2 cores. Against a PostgreSQL server three files at a time keep them
    // busy (most files wait on timers, child processes and chains much of the time); the
    // embedded PGlite serves every file from the main process, so there two.
    maxWorkers: process.env.DATABASE_URL ? 3 : 2,
    sequence: { sequencer: LongFilesFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
})
