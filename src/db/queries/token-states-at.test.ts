/**
 * One token's state at a past block (selectTokenStatesAt: GET /v1/nfts/{address}/{tokenId}?at_block=,
 * and the page of GET /v1/owners/{address}/nfts?at_block=) costs the smaller side of the token's
 * history: a token of thousands of transfers, at a block near the head, reads its changes since
 * the block and its stored state, not its history; near its start, its history up to the block.
 * A page of tokens of a handful of transfers each reads what it did (their own histories).
 *
 * Both ways give the same answer: compared on random histories (mints, burns, re-mints, balances
 * to zero and back, below zero, blocks of one timestamp, imported rows, rollbacks, a contract that
 * tells each move in both standards) at every block. History is written by the indexer's own
 * commit, rollback and import paths, so the stored state the back way reads is the production one.
 * The same cases on bench:seed's index: `npm run bench:token-states` (bench/token-states.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPool } from '@/db/client'
import { HISTORY_STAMP_SQL } from '@/db/queries/indexer-state'
import type { TransferEvent } from '@/indexer/events/types'
import { importTransfersFile } from '@/indexer/import/import'
import { commitBatch } from '@/indexer/store/commit'
import { rollbackAfter } from '@/indexer/store/rollback'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { verifiedBatch } from '@/test/ingest-batch'
import { analyzingPool, rowsRead } from '@/test/query-plans'
import { selectTokenStatesAt, TOKEN_STATE_LONG, type TokenStateAtRow } from './owners'

const ZERO = '0x0000000000000000000000000000000000000000' as Hex
/** An ERC-1155 edition: token 1 minted to 4,000 holders, then 1,000 moves between them. */
const EDITION = '0x00000000000000000000000000000000000e1155' as Hex
/** An ERC-721 token passed around 50 wallets, once a block. */
const PASSED = '0x0000000000000000000000000000000000000721' as Hex
/** Common tokens: one minted a block, each moved twice afterwards. */
const COMMON = '0x00000000000000000000000000000000000c0111' as Hex
const BLOCKS = 5_000
const wallet = (n: number) => `0x${(0xa000000 + n).toString(16).padStart(40, '0')}` as Hex

let db: TestDatabase
const embedded = isEmbeddedTestDatabase()

function event(
  block: number,
  log: number,
  collection: Hex,
  tokenId: bigint,
  from: Hex,
  to: Hex,
  amount?: bigint,
) {
  const hash = `0x${block.toString(16).padStart(64, '0')}` as Hex
  return {
    collection,
    tokenId,
    from,
    to,
    blockNumber: BigInt(block),
    blockHash: hash,
    blockTimestamp: BigInt(1_700_000_000 + block * 12),
    transactionHash: hash,
    logIndex: log,
    batchIndex: 0,
    standard: amount === undefined ? ('ERC721' as const) : ('ERC1155' as const),
    amount: amount ?? null,
  } satisfies TransferEvent
}

/** Block `b`'s transfers: one of each long history, a common token minted, two moved. */
function blockEvents(b: number): TransferEvent[] {
  const out: TransferEvent[] = []
  out.push(
    b <= 4_000
      ? event(b, 0, EDITION, 1n, ZERO, wallet(b), BigInt(1 + (b % 3)))
      : event(b, 0, EDITION, 1n, wallet(b - 4_000), wallet(b), 1n),
  )
  out.push(event(b, 1, PASSED, 7n, b === 1 ? ZERO : wallet((b - 1) % 50), wallet(b % 50)))
  out.push(event(b, 2, COMMON, BigInt(b), ZERO, wallet(b % 97)))
  if (b > 100) out.push(event(b, 3, COMMON, BigInt(b - 100), wallet((b - 100) % 97), wallet(b % 89)))
  if (b > 200) out.push(event(b, 4, COMMON, BigInt(b - 200), wallet((b - 100) % 89), wallet(b % 83)))
  return out
}

beforeAll(async () => {
  if (embedded) return
  db = await createTestDatabase()
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
  let last: bigint | null = null
  for (let from = 1; from <= BLOCKS; from += 500) {
    const to = from + 499
    const transfers: TransferEvent[] = []
    for (let b = from; b <= to; b++) transfers.push(...blockEvents(b))
    await commitBatch(
      db.pool,
      { network: 'devnet', startBlock: 1n, expectedLastIndexed: last, keepBlocks: 64n },
      verifiedBatch(BigInt(from), BigInt(to), transfers),
    )
    last = BigInt(to)
  }
  await db.pool.query('VACUUM ANALYZE')
}, 300_000)

afterAll(async () => {
  await db?.drop()
})

/** The token states, with what their statements read: transfers rows (kept or filtered) and buffers. */
async function measured(
  q: Parameters<typeof selectTokenStatesAt>[1],
): Promise<{ rows: TokenStateAtRow[]; transfers: number; buffers: number }> {
  const { pool, plans } = analyzingPool(db.pool)
  const rows = await selectTokenStatesAt({ pool }, q)
  const transfers = plans.reduce((sum, p) => sum + rowsRead(p.nodes, 'transfers'), 0)
  return { rows, transfers: Math.round(transfers), buffers: plans.reduce((sum, p) => sum + p.buffers, 0) }
}

const byKey = (rows: TokenStateAtRow[]) =>
  [...rows].sort((a, b) =>
    `${a.collection_address}|${a.token_id}`.localeCompare(`${b.collection_address}|${b.token_id}`),
  )

describe.skipIf(embedded)('a token of thousands of transfers at a past block', () => {
  const head = BigInt(BLOCKS)
  for (const [name, collection, tokenId] of [
    ['an ERC-1155 edition of 4,000 holders', EDITION, '1'],
    ['an ERC-721 token passed around', PASSED, '7'],
  ] as const) {
    // As GET /v1/nfts/{address}/{tokenId}?at_block= asks: with the stored transfer count it read.
    const keys = [{ collection, tokenId, multi: collection === EDITION, transfers: BLOCKS }]
    for (const [where, block, most] of [
      ['near the head (a few transfers since)', head - 5n, 150],
      ['at the head', head, 150],
      ['near its start', 6n, 250],
      ['before its first transfer', 0n, 250],
    ] as const)
      it(`${name}, ${where}: reads the smaller side of its history, with the forward answer`, async () => {
        const got = await measured({ keys, block })
        const forward = await selectTokenStatesAt(db, { keys, block, way: 'forward' })
        expect(got.rows).toEqual(forward)
        if (block === 0n) expect(got.rows).toEqual([])
        else expect(got.rows[0]!.transfer_count).toBeGreaterThan(0)
        console.info(`${name}, ${where}: ${got.transfers} transfers rows read, ${got.buffers} buffers`)
        expect(got.transfers, 'transfers rows read').toBeLessThan(most)
        expect(got.buffers, 'buffers').toBeLessThan(3 * most)
      })

    it(`${name}, near the head, named on a holdings page (its count unknown): the first ${TOKEN_STATE_LONG} transfers, then the same`, async () => {
      const page = [{ collection, tokenId, multi: collection === EDITION }]
      const got = await measured({ keys: page, block: head - 5n })
      expect(got.rows).toEqual(
        await selectTokenStatesAt(db, { keys: page, block: head - 5n, way: 'forward' }),
      )
      console.info(
        `${name}, near the head, on a page: ${got.transfers} transfers rows read, ${got.buffers} buffers`,
      )
      expect(got.transfers).toBeLessThan(TOKEN_STATE_LONG + 150)
    })
  }

  it('in the middle of its history: about its history, whichever way', async () => {
    const keys = [{ collection: EDITION, tokenId: '1', multi: true, transfers: BLOCKS }]
    const got = await measured({ keys, block: 2_500n })
    expect(got.rows).toEqual(await selectTokenStatesAt(db, { keys, block: 2_500n, way: 'forward' }))
    console.info(`edition in the middle: ${got.transfers} transfers rows read, ${got.buffers} buffers`)
    expect(got.transfers).toBeLessThan(2 * BLOCKS)
  })

  it('a page of 100 common tokens (three transfers each) reads their own histories, as before', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => ({
      collection: COMMON,
      tokenId: String(1_000 + 7 * i),
      multi: false,
    }))
    const block = head - 50n
    const got = await measured({ keys, block })
    expect(byKey(got.rows)).toEqual(byKey(await selectTokenStatesAt(db, { keys, block, way: 'forward' })))
    expect(got.rows.map((r) => r.transfer_count)).toEqual(Array(100).fill(3))
    console.info(`100 common tokens: ${got.transfers} transfers rows read, ${got.buffers} buffers`)
    // Their 300 transfers, a row each, and the index descents to them (measured before the back way: 300, 707).
    expect(got.transfers).toBeLessThanOrEqual(300)
    expect(got.buffers).toBeLessThanOrEqual(707)
  })
})

describe.skipIf(embedded)('its statements', () => {
  it('are prepared once per connection and run on one plan whatever their values (plan_cache_mode)', async () => {
    const pool = createPool(db.url, { max: 1 })
    try {
      const head = BigInt(BLOCKS)
      // The API's way too: in a snapshot's transaction, checked against the history it read.
      const { rows: state } = await db.pool.query(
        `SELECT network, ${HISTORY_STAMP_SQL} AS stamp FROM indexer_state`,
      )
      const basis = { network: state[0]!.network, historyRewrittenAt: state[0]!.stamp }
      for (const block of [head - 5n, 6n, 2_500n, head])
        for (const keys of [
          [{ collection: EDITION, tokenId: '1', multi: true, transfers: BLOCKS }],
          [{ collection: PASSED, tokenId: '7', multi: false }],
          [
            { collection: COMMON, tokenId: '1001', multi: false },
            { collection: COMMON, tokenId: '1002', multi: false },
          ],
        ])
          for (const checked of [undefined, basis])
            expect(byKey(await selectTokenStatesAt({ pool }, { keys, block, basis: checked }))).toEqual(
              byKey(await selectTokenStatesAt(db, { keys, block, way: 'forward' })),
            )
      const { rows } = await pool.query<{ name: string; generic_plans: string; custom_plans: string }>(
        `SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements ORDER BY name`,
      )
      expect(rows.map((r) => r.name)).toEqual(['token_states_at_long', 'token_states_at_short'])
      for (const row of rows) {
        expect(row.custom_plans, row.name).toBe('0')
        expect(Number(row.generic_plans), row.name).toBeGreaterThan(1)
      }
      // The connection goes back to the pool planning every other statement for its values: a
      // generic plan of an unnamed statement can be far slower (a substring search walked a whole
      // list with it, where its values pointed at the trigram index).
      expect((await pool.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }])
    } finally {
      await pool.end()
    }
  })
})

describe.skipIf(embedded)('both ways give the same answer', () => {
  let rdb: TestDatabase
  let dir: string
  const OWNERS = [ZERO, wallet(1), wallet(2), wallet(3)]
  const C721 = '0x00000000000000000000000000000000000000f1' as Hex
  const C1155 = '0x00000000000000000000000000000000000000f3' as Hex
  /** Contracts that tell each move as a Transfer and a TransferSingle: ERC-721 first, and ERC-1155 first. */
  const TOLD_721 = '0x00000000000000000000000000000000000000d1' as Hex
  const TOLD_1155 = '0x00000000000000000000000000000000000000d3' as Hex
  const TOKENS = [1n, 2n]
  const keys = [C721, C1155, TOLD_721, TOLD_1155].flatMap((c) =>
    [...TOKENS, 3n].map((t) => ({
      collection: c as string,
      tokenId: t.toString(),
      multi: c === C1155 || c === TOLD_1155,
    })),
  )

  beforeAll(async () => {
    if (embedded) return
    rdb = await createTestDatabase()
    dir = mkdtempSync(path.join(tmpdir(), 'token-states-at-'))
  }, 120_000)
  afterAll(async () => {
    await rdb?.drop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** One move: which contract, token, from, to, and (ERC-1155) amount. */
  const move = fc.record({
    kind: fc.constantFrom('721', '1155', 'told721', 'told1155'),
    token: fc.constantFrom(...TOKENS),
    from: fc.integer({ min: 0, max: 3 }),
    to: fc.integer({ min: 0, max: 3 }),
    amount: fc.integer({ min: 0, max: 4 }),
  })
  type Move = { kind: string; token: bigint; from: number; to: number; amount: number }
  const scenario = fc.record({
    // Each block: the dense tokens (#1 of both plain contracts) moved, and up to three more moves.
    blocks: fc.array(
      fc.record({
        dense721: fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })),
        dense1155: fc.tuple(
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: 0, max: 4 }),
        ),
        moves: fc.array(move, { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 70, size: 'max' },
    ),
    // Timestamps: one per block, or one per two blocks (blocks of the same second).
    paired: fc.boolean(),
    // ERC-721 history imported from before the window (block 0).
    imported: fc.array(
      fc.record({
        token: fc.constantFrom(...TOKENS),
        from: fc.integer({ min: 0, max: 3 }),
        to: fc.integer({ min: 1, max: 3 }),
      }),
      {
        maxLength: 3,
      },
    ),
    // Rollbacks: after which block (index), how deep.
    rollback: fc.option(
      fc.record({ at: fc.integer({ min: 0, max: 69 }), depth: fc.integer({ min: 1, max: 6 }) }),
    ),
  })

  function eventsOf(
    block: number,
    paired: boolean,
    fork: number,
    spec: { dense721: [number, number]; dense1155: [number, number, number]; moves: Move[] },
  ) {
    const hash = `0x${block.toString(16).padStart(32, '0')}${fork.toString(16).padStart(32, '0')}` as Hex
    let log = 0
    const out: TransferEvent[] = []
    const push = (collection: Hex, tokenId: bigint, from: number, to: number, amount: bigint | null) =>
      out.push({
        collection,
        tokenId,
        from: OWNERS[from]!,
        to: OWNERS[to]!,
        blockNumber: BigInt(block),
        blockHash: hash,
        blockTimestamp: BigInt(1_700_000_000 + 12 * (paired ? Math.floor(block / 2) : block)),
        transactionHash: hash,
        logIndex: log++,
        batchIndex: 0,
        standard: amount === null ? 'ERC721' : 'ERC1155',
        amount,
      })
    push(C721, 1n, ...spec.dense721, null)
    push(C1155, 1n, spec.dense1155[0], spec.dense1155[1], BigInt(spec.dense1155[2]))
    for (const m of spec.moves) {
      if (m.kind === '721') push(C721, m.token, m.from, m.to, null)
      else if (m.kind === '1155') push(C1155, m.token, m.from, m.to, BigInt(m.amount))
      else {
        const c = m.kind === 'told721' ? TOLD_721 : TOLD_1155
        const both: Array<bigint | null> = m.kind === 'told721' ? [null, 1n] : [1n, null]
        for (const amount of both) push(c, m.token, m.from, m.to, amount)
      }
    }
    return out
  }

  const sorted = (rows: TokenStateAtRow[]) =>
    [...rows].sort((a, b) =>
      `${a.collection_address}|${a.token_id}`.localeCompare(`${b.collection_address}|${b.token_id}`),
    )

  it('folds every transfer as the indexer did, whatever its own kind', async () => {
    await rdb.pool.query(
      'TRUNCATE transfers, tokens, token_balances, collections, collection_holders, blocks, indexed_ranges, indexer_state',
    )
    await ensureIndexerState(rdb.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
    // An ERC-1155 token minted 2 a block to a new holder, once told as an ERC-721 Transfer (block 41),
    // which moves nothing of an ERC-1155 token: stored, forward and back from now alike.
    const transfers = Array.from({ length: 80 }, (_, i) => {
      const b = i + 1
      return b === 41
        ? { ...event(b, 0, C1155, 9n, ZERO, wallet(b)), standard: 'ERC1155' as const }
        : event(b, 0, C1155, 9n, ZERO, wallet(b), 2n)
    })
    await commitBatch(
      rdb.pool,
      { network: 'devnet', startBlock: 1n, expectedLastIndexed: null, keepBlocks: 64n },
      {
        fromBlock: 1n,
        toBlock: 80n,
        transfers,
        metadataUpdates: [],
        verified: true,
        blocks: [
          {
            number: 80n,
            hash: `0x${(80).toString(16).padStart(64, '0')}`,
            parentHash: '0x00',
            timestamp: 1n,
          },
        ],
        lastSeenBlock: 80n,
        chainConfirmedBlock: 78n,
      },
    )
    const { rows: stored } = await rdb.pool.query(
      'SELECT total_supply::text AS supply, holder_count FROM tokens WHERE collection_address = $1',
      [C1155],
    )
    expect(stored).toEqual([{ supply: String(2 * 79), holder_count: 79 }])
    const keys = [{ collection: C1155, tokenId: '9', multi: true }]
    for (const block of [1n, 10n, 40n, 41n, 42n, 60n, 80n]) {
      const forward = await selectTokenStatesAt(rdb, { keys, block, way: 'forward' })
      const minted = block > 40n ? block - 1n : block
      expect(forward).toEqual([
        expect.objectContaining({
          transfer_count: Number(block),
          total_supply: String(2n * minted),
          holder_count: Number(minted),
        }),
      ])
      for (const q of [{ way: 'back' as const }, { long: 2, probe: 2 }, { long: 2, probe: 8 }])
        expect(
          await selectTokenStatesAt(rdb, { keys, block, ...q }),
          `${JSON.stringify(q)} at ${block}`,
        ).toEqual(forward)
    }
  })

  it('back from now, forward, and the chosen way, at every block of random histories', async () => {
    let fork = 0
    let checked = 0
    let backs = 0
    await fc.assert(
      fc.asyncProperty(scenario, async (sc) => {
        await rdb.pool.query(
          'TRUNCATE transfers, tokens, token_balances, collections, collection_holders, blocks, indexed_ranges, indexer_state',
        )
        await ensureIndexerState(rdb.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
        if (sc.imported.length > 0) {
          const file = path.join(dir, `imported-${fork}.jsonl`)
          writeFileSync(
            file,
            sc.imported
              .map((r, i) =>
                JSON.stringify({
                  collection_address: C721,
                  token_id: r.token.toString(),
                  from_address: OWNERS[r.from],
                  to_address: OWNERS[r.to],
                  block_number: 0,
                  block_timestamp: 1_600_000_000 + i,
                  transaction_hash: `0x${'ab'.repeat(31)}${(fork % 256).toString(16).padStart(2, '0')}`,
                  log_index: i,
                }),
              )
              .join('\n'),
          )
          await importTransfersFile(rdb.pool, file, { startBlock: 1n })
        }
        let last: bigint | null = null
        const commit = async (from: number, specs: typeof sc.blocks) => {
          fork++
          const transfers = specs.flatMap((spec, i) => eventsOf(from + i, sc.paired, fork, spec))
          const to = BigInt(from + specs.length - 1)
          await commitBatch(
            rdb.pool,
            { network: 'devnet', startBlock: 1n, expectedLastIndexed: last, keepBlocks: 64n },
            verifiedBatch(BigInt(from), to, transfers),
          )
          last = to
        }
        const cut = sc.rollback ? Math.min(sc.rollback.at, sc.blocks.length - 1) : sc.blocks.length - 1
        await commit(1, sc.blocks.slice(0, cut + 1))
        if (sc.rollback && cut + 1 < sc.blocks.length) {
          // A reorganisation: the tail replaced by the rest of the blocks (stored state rebuilt).
          const ancestor = BigInt(Math.max(0, cut + 1 - sc.rollback.depth))
          await rollbackAfter(
            rdb.pool,
            { network: 'devnet', startBlock: 1n, lastSeenBlock: last!, chainConfirmedBlock: ancestor },
            ancestor,
          )
          last = ancestor === 0n ? null : ancestor
          await commit(Number(ancestor) + 1, sc.blocks.slice(cut + 1))
        }
        const head = Number(last ?? 0n)
        for (let b = 0; b <= head + 1; b++) {
          const block = BigInt(b)
          const forward = sorted(await selectTokenStatesAt(rdb, { keys, block, way: 'forward' }))
          expect(
            sorted(await selectTokenStatesAt(rdb, { keys, block, way: 'back' })),
            `back at ${b}`,
          ).toEqual(forward)
          // Every route: long histories found by the first statement, or named by their count; the
          // probe of the second from 2 transfers (1 for the plain tokens: every path of the choice).
          const hinted = keys.map((k) => ({ ...k, transfers: 1_000 }))
          for (const [q, expected] of [
            [{ keys, long: 2, probe: 2 }, forward],
            [{ keys, long: 3, probe: 3 }, forward],
            [{ keys: hinted, probe: 2 }, forward],
            [{ keys: hinted }, forward],
            [{ keys }, forward],
            [{ keys, long: 1, probe: 1 }, forward],
          ] as const)
            expect(
              sorted(await selectTokenStatesAt(rdb, { ...q, block })),
              `${JSON.stringify({ ...q, keys: undefined })} at ${b}`,
            ).toEqual(expected)
          checked++
          if (forward.length > 0) backs++
        }
      }),
      { numRuns: 20 },
    )
    console.info(`compared at ${checked} blocks (${backs} with a token)`)
  }, 300_000)
})
