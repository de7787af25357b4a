/**
 * Writes to the activity journal for push tests, through the indexer's own
 * store functions (commitBatch, rollbackAfter): one mint per block, reorgs
 * back to an ancestor, head moves. The triggers on transfers journal them
 * and notify listeners, as they do for the running indexer.
 */
import type pg from 'pg'
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach } from 'vitest'
import type { TransferEvent } from '@/indexer/events/types'
import { commitBatch, type IngestBatch } from '@/indexer/store/commit'
import { rollbackAfter } from '@/indexer/store/rollback'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, type TestDatabase } from './db'

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}` as Hex

/** PostgreSQL's deadlock_detected. */
const DEADLOCK_DETECTED = '40P01'

export const JOURNAL_COLLECTION = hex(0xf1, 20)
export const OTHER_COLLECTION = hex(0xf2, 20)
export const ERC1155_COLLECTION = hex(0x1155, 20)

export class JournalWriter {
  private lastIndexed: bigint | null = null
  private readonly now = BigInt(Math.floor(Date.now() / 1000))

  constructor(private readonly pool: pg.Pool) {}

  /**
   * Empties the chain tables and the journal, and starts the indexer state over. TRUNCATE locks
   * its tables one after another, so a server of the previous test still reading two of them
   * (a stream's journal query) can deadlock with it; PostgreSQL then cancels the TRUNCATE, which
   * is run again (the server's reads never lock tables against each other in production: the
   * indexer deletes rows, it never truncates).
   */
  async reset() {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.pool.query(
          'TRUNCATE transfers, tokens, collections, collection_holders, token_balances, erc1155_uris, blocks, indexed_ranges, indexer_state, activity_journal',
        )
        break
      } catch (err) {
        if ((err as { code?: string }).code !== DEADLOCK_DETECTED || attempt === 5) throw err
      }
    }
    await ensureIndexerState(this.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
    this.lastIndexed = null
  }

  /**
   * Commits block `block` of fork `fork` with one mint (token fork*1000+block), the head at `head`;
   * with `confirmed`, the block is committed as verified and the chain's confirmed block is that.
   */
  async commitBlock(
    block: number,
    head: number,
    fork = 0,
    collection: Hex = JOURNAL_COLLECTION,
    options: { confirmed?: number } = {},
  ) {
    const batch = this.blockBatch(block, head, { ...options, fork, collection })
    await this.commit(batch)
    return batch.blocks[0]!.hash
  }

  /** Commits a batch of blockBatch's after the blocks committed so far. */
  async commit(batch: IngestBatch) {
    const ctx = { network: 'devnet', startBlock: 1n, expectedLastIndexed: this.lastIndexed, keepBlocks: 64n }
    this.lastIndexed = (await commitBatch(this.pool, ctx, batch)).lastIndexedBlock
  }

  /** An ERC-721 transfer in block `block` of fork `fork`, dated and hashed as blockBatch makes that block. */
  transfer(
    block: number,
    tokenId: bigint,
    from: Hex,
    to: Hex,
    options: { fork?: number; collection?: Hex; logIndex?: number } = {},
  ): TransferEvent {
    const hash = hex((options.fork ?? 0) * 1_000 + block, 32)
    return {
      collection: options.collection ?? JOURNAL_COLLECTION,
      tokenId,
      from,
      to,
      blockNumber: BigInt(block),
      blockHash: hash,
      blockTimestamp: this.now + BigInt(block),
      transactionHash: hash,
      logIndex: options.logIndex ?? 0,
      batchIndex: 0,
      standard: 'ERC721',
    }
  }

  /**
   * Block `block` of fork `fork` as the indexer commits it, seen at head `head`: `transfers`, else
   * `mints` mints to 0x…a1 (1 by default; tokens fork*1000+block, then 1,000,000 apart); verified,
   * with the chain's confirmed block at `confirmed`, when that is given.
   */
  blockBatch(
    block: number,
    head: number,
    options: {
      fork?: number
      collection?: Hex
      confirmed?: number
      mints?: number
      transfers?: TransferEvent[]
    } = {},
  ): IngestBatch {
    const fork = options.fork ?? 0
    const hash = hex(fork * 1_000 + block, 32)
    const transfers =
      options.transfers ??
      Array.from({ length: options.mints ?? 1 }, (_, i) =>
        this.transfer(block, BigInt(fork * 1_000 + block + i * 1_000_000), hex(0, 20), hex(0xa1, 20), {
          fork,
          collection: options.collection,
          logIndex: i,
        }),
      )
    return {
      fromBlock: BigInt(block),
      toBlock: BigInt(block),
      transfers,
      metadataUpdates: [],
      verified: options.confirmed !== undefined,
      blocks: [
        {
          number: BigInt(block),
          hash,
          parentHash: hex(fork * 1_000 + block - 1, 32),
          timestamp: this.now + BigInt(block),
        },
      ],
      lastSeenBlock: BigInt(head),
      chainConfirmedBlock: BigInt(options.confirmed ?? 0),
    }
  }

  /** A reorg back to `ancestor` seen at head `head`. */
  async reorgTo(ancestor: number, head: number) {
    await this.setHead(head)
    const progress = await rollbackAfter(
      this.pool,
      { network: 'devnet', startBlock: 1n, lastSeenBlock: BigInt(head), chainConfirmedBlock: 0n },
      BigInt(ancestor),
    )
    this.lastIndexed = progress.lastIndexedBlock
  }

  /**
   * An ERC-1155 transfer row (it has an amount) in block `block`, written as the indexer stores one
   * (docs/database.md, "ERC-1155"): the triggers journal it with its amount and notify listeners.
   */
  async insertErc1155(block: number, tokenId: number, amount: bigint, collection: Hex = ERC1155_COLLECTION) {
    const hash = hex(0x1155_0000 + block * 100 + tokenId, 32)
    await this.pool.query(
      `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                              block_hash, block_timestamp, transaction_hash, log_index, batch_index, amount)
       VALUES ($1, $2, $3, $4, 'mint', $5, $6, to_timestamp($7), $6, 0, 0, $8)`,
      [
        collection,
        tokenId,
        hex(0, 20),
        hex(0xa1, 20),
        block,
        hash,
        Number(this.now) + block,
        amount.toString(),
      ],
    )
  }

  /** Moves the head (the indexer saw a new block): notifies indexer_head. */
  async setHead(head: number) {
    await this.pool.query('UPDATE indexer_state SET last_seen_block = $1', [head])
  }
}

/**
 * A database of the test file's own and a JournalWriter over it, the chain tables emptied
 * before each test. Read the fields inside tests (they are set in beforeAll).
 */
export function journalDatabase(): { db: TestDatabase; writer: JournalWriter } {
  const scope = {} as { db: TestDatabase; writer: JournalWriter }
  beforeAll(async () => {
    scope.db = await createTestDatabase()
    scope.writer = new JournalWriter(scope.db.pool)
  }, 60_000)
  afterAll(async () => {
    await scope.db?.drop()
  })
  beforeEach(() => scope.writer.reset())
  return scope
}

/**
 * Additions written straight into the journal (no transfers behind them, no trigger): one mint
 * per id of `ids` (its transfer id, token id and transaction), in the block `blockOf` names,
 * seen at head `head`. For the tests of what reads the journal back (windows, streams).
 */
export async function insertJournalAdditions(
  pool: pg.Pool,
  ids: number[],
  head: number,
  blockOf: (id: number) => number = () => 1,
): Promise<void> {
  await pool.query(
    `INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
       event_type, block_number, block_hash, block_timestamp, transaction_hash, log_index, batch_index, head_block)
     SELECT 'added', g, '0x01', g, '0x00', '0x02', 'mint', b, '0x0a', now(), '0x' || lpad(to_hex(g), 64, '0'), 0, 0, $3
       FROM unnest($1::int[], $2::int[]) AS x(g, b)`,
    [ids, ids.map(blockOf), head],
  )
}

/** from, from + 1, …, to. */
export const upTo = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
