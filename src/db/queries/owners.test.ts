/**
 * The choice of a way to compute a collection's holders at a block
 * (docs/database.md, "Snapshots"): pure functions of the block, the
 * collection's span and its counters. Each way's answer is compared with the
 * others' and with a model in src/server/api/v1/ownership.test.ts, and with
 * the chain in src/indexer/test/ownership-truth.test.ts.
 */
import type pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { ZERO_ADDRESS } from '@/lib/schemas'
import { testServerUrl } from '@/test/db'
import { createPool } from '../pool'
import {
  chooseHoldersAtArm,
  chooseHoldingsAtArm,
  type HoldersAtCostInputs,
  holdersAtCosts,
  inSnapshotTransaction,
  mintsDecideArm,
  SNAPSHOT_TIMEOUT_FACTOR,
} from './owners'
import type { ReadDb } from './sql'

/** bench:seed's BIG: 5,000,000 transfers over 2,000,000 blocks, 500,000 tokens, 176,314 holders now. */
const big: HoldersAtCostInputs = {
  multi: false,
  block: 0n,
  head: 2_000_000n,
  since: 1n,
  transfers: 5_000_000,
  tokens: 500_000,
  holders: 176_314,
}
const at = (block: bigint, more: Partial<HoldersAtCostInputs> = {}) => ({ ...big, block, ...more })

describe('chooseHoldingsAtArm', () => {
  it('reads a wallet back from now near the head, the zero address (its burned tokens) too', () => {
    // Forward, the zero address reads every burn up to the block and each one's last transfer; back,
    // the burned tokens now (tokens_burned_erc721_idx) and the mints and burns since the block.
    for (const owner of ['0xa000000000000000000000000000000000000000', ZERO_ADDRESS]) {
      const span = { owner, head: 2_000_000n, since: 1n }
      expect(chooseHoldingsAtArm({ ...span, block: 1_992_800n }), owner).toBe('back')
      expect(chooseHoldingsAtArm({ ...span, block: 100_000n }), owner).toBe('forward')
    }
  })
})

describe('chooseHoldersAtArm', () => {
  it('computes the middle of a long history token by token, once the mints up to the block are counted', () => {
    const middle = at(1_000_000n)
    // Unknown, the tokens that existed could make per-token the dearest or the cheapest way.
    expect(mintsDecideArm(middle)).toBe(true)
    // Half of them had been minted (the seed mints evenly): 250,000 probes that find a transfer.
    expect(chooseHoldersAtArm({ ...middle, minted: 250_000 })).toBe('per-token')
    const costs = holdersAtCosts({ ...middle, minted: 250_000 })
    expect(costs['per-token']).toBe(250_000 * 2 + 250_000 * 7)
    expect(costs.forward).toBeCloseTo(2_500_000, -1)
    // 2,500,000 transfers since, touching (at most) every one of the 500,000 tokens.
    expect(costs.back).toBeCloseTo(2_500_000 + 500_000 * 9 + 176_314, -1)
    // Had every token existed, reading half of the history would be cheaper.
    expect(chooseHoldersAtArm({ ...middle, minted: 500_000 })).toBe('forward')
  })

  it('across the history of a collection minted evenly: forward, then token by token, then back from now', () => {
    // As bench:seed mints: the tokens that existed at a block are that share of them.
    for (const [block, arm] of [
      [400_000n, 'forward'],
      [790_000n, 'forward'],
      [810_000n, 'per-token'],
      [1_000_000n, 'per-token'],
      [1_750_000n, 'per-token'],
      [1_870_000n, 'per-token'],
      [1_880_000n, 'back'],
      [1_900_000n, 'back'],
    ] as const) {
      const minted = Math.round((500_000 * Number(block)) / 2_000_000)
      const inputs = mintsDecideArm(at(block)) ? at(block, { minted }) : at(block)
      expect(chooseHoldersAtArm(inputs), `${block}`).toBe(arm)
    }
  })

  it('reads back from now near the head, forward near the start, without counting mints', () => {
    for (const [block, arm] of [
      [1_992_788n, 'back'], // a day before the head: 17,000 transfers since
      [2_000_000n, 'back'], // the head: the holders now
      [5_000_000n, 'back'], // past the collection's last block: nothing changed since
      [100_000n, 'forward'], // 5 % of the history
      [0n, 'forward'], // before the collection's first block: nothing to read
    ] as const) {
      expect(mintsDecideArm(at(block)), `${block}`).toBe(false)
      expect(chooseHoldersAtArm(at(block)), `${block}`).toBe(arm)
    }
  })

  it('goes token by token for a collection of few tokens and a long history, wherever the block', () => {
    const few = { transfers: 1_000_000, tokens: 1_000, holders: 700 }
    for (const block of [200_000n, 1_000_000n, 1_800_000n]) {
      expect(mintsDecideArm(at(block, few))).toBe(false)
      expect(chooseHoldersAtArm(at(block, few))).toBe('per-token')
    }
    // Very near the head, the few changes since are cheaper than 1,000 probes.
    expect(chooseHoldersAtArm(at(1_999_990n, few))).toBe('back')
  })

  it('computes an ERC-1155 collection forward, wherever the block', () => {
    for (const block of [1n, 1_000_000n, 2_000_000n]) {
      expect(chooseHoldersAtArm(at(block, { multi: true }))).toBe('forward')
      expect(mintsDecideArm(at(block, { multi: true }))).toBe(false)
    }
  })

  it('treats an empty history and a collection of one block', () => {
    expect(chooseHoldersAtArm(at(10n, { transfers: 0, tokens: 0, holders: 0 }))).toBe('forward')
    expect(chooseHoldersAtArm(at(7n, { since: 7n, head: 7n, transfers: 3, tokens: 3, holders: 1 }))).toBe(
      'back',
    )
  })
})

/** One statement in a snapshot's transaction. */
const snapshotStatement = <Row extends pg.QueryResultRow>(db: ReadDb, sql: string, params: unknown[]) =>
  inSnapshotTransaction(db, undefined, (run) => run<Row>(sql, params))

describe('a snapshot statement', () => {
  // A pool bounded as the web process's is (statement timeout, and the client's own twice that).
  const pool = createPool(testServerUrl(), { statementTimeoutMs: 150, max: 1 })
  afterAll(() => pool.end())

  it('may outlive the pool’s statement timeout, up to SNAPSHOT_TIMEOUT_FACTOR times it, without memoize', async () => {
    expect(SNAPSHOT_TIMEOUT_FACTOR).toBe(6)
    // 0.4 s: past the pool's 150 ms (and the client's 300 ms), within 6 × 150 ms.
    const rows = await snapshotStatement<{ memoize: string; timeout: string }>(
      { pool },
      `SELECT pg_sleep(0.4)::text, current_setting('enable_memoize') AS memoize,
              current_setting('statement_timeout') AS timeout`,
      [],
    )
    expect(rows).toEqual([{ pg_sleep: '', memoize: 'off', timeout: '900ms' }])
    // Past 900 ms, PostgreSQL cancels it.
    await expect(snapshotStatement({ pool }, 'SELECT pg_sleep(1.5)', [])).rejects.toMatchObject({
      code: '57014',
    })
    // The connection's own statements keep the pool's bound afterwards.
    await expect(pool.query('SELECT pg_sleep(0.4)')).rejects.toMatchObject({ code: '57014' })
  })
})
