/**
 * The indexer started against a database whose NETWORK was indexed from another chain: a
 * refusal no restart cures, so it exits with code 3 (as for a node on another chain than
 * CHAIN_ID), which `npm start` takes as a refusal (src/start/after-exit.ts), not a crash it
 * restarts for ever (docs/operations.md, "Crashes and restarts").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnvilInstance, startAnvil } from '@/dev/devnet/anvil'
import { afterExit } from '@/start/after-exit'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { spawnIndexer } from './test/child'

let db: TestDatabase
let anvil: AnvilInstance

beforeAll(async () => {
  ;[db, anvil] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 31337 })])
  // The database was indexed from chain 1 under the same NETWORK name.
  await db.pool.query(
    `INSERT INTO indexer_state (network, chain_id, start_block, coverage_start_block) VALUES ('devnet', 1, 0, 0)`,
  )
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
  await db?.drop()
})

describe('indexer started against a database of another chain', () => {
  it('refuses with exit code 3, which `npm start` does not restart', async () => {
    const child = spawnIndexer({
      DATABASE_URL: db.url,
      RPC_URL: anvil.rpcUrl,
      CHAIN_ID: '31337',
      NETWORK: 'devnet',
      CONFIRMATIONS: '0',
    })
    const timer = setTimeout(() => void child.kill9(), 45_000)
    const { code } = await child.exited
    clearTimeout(timer)
    const output = `${child.lines.join('\n')}\n${child.stderr.join('')}`
    expect(output).toMatch(/holds network \\?"devnet\\?" of chain 1, not chain 31337/)
    expect(code).toBe(3)
    expect(afterExit({ code, signal: null, ranMs: 1_000 }, 0)).toEqual({ action: 'refuse' })
  })
})
