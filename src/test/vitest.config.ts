/**
 * The shared Vitest configuration (`npm run test:unit`). Test files run in
 * parallel, each in its own PostgreSQL schema (src/test/db.ts), against
 * DATABASE_URL when set (CI) or an embedded PGlite server started once for
 * the run (src/test/global-setup.ts).
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = fileURLToPath(new URL('../..', import.meta.url))

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
    // These machines have 2 cores; the database (or PGlite in the main process) needs its share.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
})
