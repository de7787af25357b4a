/**
 * A block followed at the head is committed on one read and kept as the first
 * read of its verification at the confirmation depth (sync/verify-confirmed.ts
 * firstRead); on a node without eth_getBlockReceipts nothing else checks it.
 * Here that one answer by block hash lies about the two logs of one
 * transaction (indexes 0 and 1). Numbered the other way round, every honest
 * read by range holds another log at those positions, and the union of the
 * reads is refused ("two different logs at one position", verify/log-set.ts).
 * With the second numbered 5, an index the block has no log at, no position
 * conflicts, but no honest read holds the log at 5 and the kept read lacks the
 * one at 1, so the union is never held whole by enough reads. This shows
 * that the kept read does not hold verification back for good: it is
 * set aside (verify/agreed-logs.ts readAgreedLogs, `kept`), fresh reads settle
 * alone, the stored rows are compared with them and repaired, and the
 * confirmed block moves on with coverage complete (docs/indexer.md,
 * "Verification"). Before, every retry started again from the same kept read:
 * confirmation stopped at the block before the lie, coverage stayed partial
 * and the wrong rows stayed until a restart.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from '../test/chain'
import { type RunningIndexer, startIndexer, testConfig } from '../test/indexer'
import { waitForIndexed } from '../test/oracle'
import { lineRecorder } from '../test/provider-run'
import { type JsonRpcItem, type RewritingRelay, startRewritingRelay } from '../test/rewriting-relay'

type AnsweredLog = { blockNumber: string; logIndex: string }

/** The block whose first answer by hash lies, and how it lies about that block's logs. */
let lieAbout = -1
let lie: (logs: AnsweredLog[]) => void = () => undefined
let lied = 0

function answer(request: JsonRpcItem, upstream: JsonRpcItem): JsonRpcItem {
  // A node without receipts (many hosted providers): no proof at the head, the block is committed on one read.
  if (request.method === 'eth_getBlockReceipts')
    return {
      jsonrpc: '2.0',
      id: request.id,
      error: { code: -32601, message: 'the method eth_getBlockReceipts does not exist/is not available' },
    } as JsonRpcItem
  const filter = request.params?.[0] as { blockHash?: string } | undefined
  if (request.method === 'eth_getLogs' && filter?.blockHash && Array.isArray(upstream.result)) {
    const logs = upstream.result as AnsweredLog[]
    if (lied === 0 && logs.length >= 2 && Number(logs[0]!.blockNumber) === lieAbout) {
      lied++
      lie(logs)
    }
  }
  return upstream
}

let chain: TestChain
let db: TestDatabase
let proxy: RewritingRelay
let indexer: RunningIndexer
let nft: Address
const log = lineRecorder()

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  proxy = await startRewritingRelay(chain.anvil.rpcUrl, answer)
  nft = (await chain.deploy('TestNFT', ['Index Apes', 'IAPE', ''])).address
  await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], 1n])
  const config = testConfig({ DATABASE_URL: db.url, RPC_URL: proxy.url, CONFIRMATIONS: '2' })
  indexer = startIndexer(config, db.pool, { metadata: { enabled: false }, logger: log.logger })
  await waitForIndexed(db.pool, chain.clients)
  // A few blocks followed at the head, one at a time.
  for (let i = 2n; i <= 4n; i++) {
    await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], i])
    await waitForIndexed(db.pool, chain.clients)
  }
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await proxy?.stop()
  await chain?.stop()
  await db?.drop()
})

/** Lies of one answer by hash about a block's two logs (indexes 0 and 1). */
const LIES: Array<{ name: string; lie: (logs: AnsweredLog[]) => void; conflict: RegExp }> = [
  {
    name: 'numbers the two logs the other way round',
    lie: (logs) => {
      const [a, b] = [logs[0]!.logIndex, logs[1]!.logIndex]
      logs[0]!.logIndex = b
      logs[1]!.logIndex = a
    },
    conflict: /two different logs at index/,
  },
  {
    // No two logs meet at one position: every fresh read lacks the one at index 5, the kept
    // read the one at index 1.
    name: 'numbers the second log 5, an index no log of the block has',
    lie: (logs) => {
      logs[1]!.logIndex = '0x5'
    },
    conflict: /one log at index 5 and at index 1 of block/,
  },
]

describe.sequential('one answer by block hash that lies about the log index', () => {
  for (const { name, lie: told, conflict } of LIES)
    it(`${name}: caught and repaired at the confirmation depth, and confirmation moves on`, async () => {
      log.dumpOnFailure(30)
      const conflictsBefore = log.count(conflict)
      const repairsBefore = log.count(/verification: repaired blocks/)
      lied = 0
      lie = told
      lieAbout = Number((await chain.head()) + 1n)
      // One transaction, two Transfer logs (indexes 0 and 1), followed at the head.
      const first = 100n + BigInt(lieAbout) * 10n
      const block = await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], first, 2n])
      expect(Number(block)).toBe(lieAbout)
      await waitForIndexed(db.pool, chain.clients)
      expect(lied).toBe(1)
      // The block reaches the confirmation depth (CONFIRMATIONS 2) and then some.
      // One block at a time, each followed at the head before the next (a chain's usual pace).
      for (let i = 0n; i < 4n; i++) {
        await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], first + 2n + i])
        await waitForIndexed(db.pool, chain.clients)
      }
      const target = (await chain.head()) - 2n
      const deadline = Date.now() + 30_000
      let state = { verified: null as string | null, confirmed: '', coverage: '' }
      while (Date.now() < deadline) {
        const { rows } = await db.pool.query(
          `SELECT last_verified_block::text AS verified, last_confirmed_block::text AS confirmed,
                  coverage_status AS coverage FROM indexer_state`,
        )
        state = rows[0]
        if (state.verified !== null && BigInt(state.verified) >= target) break
        await new Promise((r) => setTimeout(r, 250))
      }
      // Before each fix: verified and confirmed stayed at the block before the lie, coverage
      // 'partial', and the log repeated "verification waits: …" (an inconsistent answer for the
      // swap, "no 12 reads settled on one answer" for the free index).
      expect({ confirmed: state.confirmed, coverage: state.coverage }).toEqual({
        confirmed: target.toString(),
        coverage: 'complete',
      })
      // And the stored rows are the chain's: the first token at log index 0, the second at 1.
      const { rows } = await db.pool.query(
        'SELECT token_id::text, log_index FROM transfers WHERE block_number = $1 ORDER BY log_index',
        [lieAbout],
      )
      expect(rows).toEqual([
        { token_id: first.toString(), log_index: 0 },
        { token_id: (first + 1n).toString(), log_index: 1 },
      ])
      // Caught at the confirmation depth: the kept read set aside, the stored rows repaired.
      expect(log.count(conflict)).toBeGreaterThan(conflictsBefore)
      expect(log.count(/verification: repaired blocks/)).toBeGreaterThan(repairsBefore)
    }, 90_000)
})
