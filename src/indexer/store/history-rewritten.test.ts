/**
 * indexer_state.history_rewritten_at (docs/api.md, "Snapshots"): web processes keep snapshots
 * at past blocks under it, so it must move whenever transfers at or below the confirmed block
 * change (a rollback below it, a repair, an import, a new START_BLOCK), and only then: a commit
 * or a rollback of unconfirmed blocks leaves it, or every reorganisation at the head would
 * throw the snapshots away.
 */
import { describe, expect, it } from 'vitest'
import { JOURNAL_COLLECTION, journalDatabase } from '@/test/journal-writes'
import { writeTransfers } from '.'
import { commitWithin } from './commit'
import { withWriteTransaction } from './db'
import { rollbackWithin } from './rollback'
import { ensureIndexerState } from './state'

const scope = journalDatabase()

const state = async () =>
  (
    await scope.db.pool.query<{ rewritten: string; confirmed: string }>(
      `SELECT (extract(epoch FROM history_rewritten_at) * 1000000)::bigint::text AS rewritten,
              last_confirmed_block::text AS confirmed
         FROM indexer_state`,
    )
  ).rows[0]!

/** Blocks 1..4 committed with the chain's confirmed block at 3: blocks 1..3 are confirmed. */
async function confirmedHistory() {
  for (let block = 1; block <= 4; block++)
    await scope.writer.commitBlock(block, 5, 0, JOURNAL_COLLECTION, { confirmed: 3 })
  expect((await state()).confirmed).toBe('3')
}

describe('history_rewritten_at', () => {
  it('stays through commits and rollbacks above the confirmed block', async () => {
    await confirmedHistory()
    const before = (await state()).rewritten
    await scope.writer.commitBlock(5, 6, 0, JOURNAL_COLLECTION, { confirmed: 3 })
    await scope.writer.reorgTo(4, 6)
    await scope.writer.commitBlock(5, 6, 1, JOURNAL_COLLECTION, { confirmed: 3 })
    expect((await state()).rewritten).toBe(before)
  })

  it('moves when a rollback removes confirmed transfers, not when the new fork is committed', async () => {
    await confirmedHistory()
    const before = (await state()).rewritten
    // A reorganisation deeper than the confirmed block (or a repair): blocks 3 and 4 go.
    await scope.writer.reorgTo(2, 6)
    const after = await state()
    expect(BigInt(after.rewritten)).toBeGreaterThan(BigInt(before))
    expect(after.confirmed).toBe('0')
    // Their replacements land above the (moved back) confirmed block: nothing more to retire.
    await scope.writer.commitBlock(3, 6, 1, JOURNAL_COLLECTION, { confirmed: 3 })
    expect((await state()).rewritten).toBe(after.rewritten)
  })

  it('moves when a repair adds a transfer the stored rows lacked at a confirmed block', async () => {
    // Blocks 1..3 confirmed, block 4 not; the reads of block 3 left out its second mint.
    await confirmedHistory()
    const before = (await state()).rewritten
    // The repair as sync/verify-confirmed.ts makes it: back to block 2 and the verified block 3
    // committed, in one transaction (the commit lands after the confirmed block moved back).
    await withWriteTransaction(scope.db.pool, async (client) => {
      const rolledBack = await rollbackWithin(
        client,
        { network: 'devnet', startBlock: 1n, lastSeenBlock: 5n, chainConfirmedBlock: 3n },
        2n,
      )
      await commitWithin(
        client,
        {
          network: 'devnet',
          startBlock: 1n,
          expectedLastIndexed: rolledBack.lastIndexedBlock,
          keepBlocks: 64n,
        },
        scope.writer.blockBatch(3, 5, { confirmed: 3, mints: 2 }),
      )
    })
    expect(BigInt((await state()).rewritten)).toBeGreaterThan(BigInt(before))
  })

  it('moves when history is imported below the confirmed block', async () => {
    await confirmedHistory()
    const before = (await state()).rewritten
    await writeTransfers(
      scope.db.pool,
      [
        {
          collection: JOURNAL_COLLECTION,
          tokenId: 77n,
          from: '0x0000000000000000000000000000000000000000',
          to: '0x00000000000000000000000000000000000000b2',
          blockNumber: 1n,
          blockTimestamp: new Date(),
          transactionHash: `0x${'77'.repeat(32)}`,
          logIndex: 5,
        },
      ],
      { source: 'import' },
    )
    expect(BigInt((await state()).rewritten)).toBeGreaterThan(BigInt(before))
  })

  it('moves with a new START_BLOCK', async () => {
    await confirmedHistory()
    const before = (await state()).rewritten
    await ensureIndexerState(scope.db.pool, { network: 'devnet', chainId: 31337, startBlock: 2 })
    expect(BigInt((await state()).rewritten)).toBeGreaterThan(BigInt(before))
  })
})
