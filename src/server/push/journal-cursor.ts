/**
 * What a push consumer (a stream, a webhook endpoint) at a given point of the
 * activity journal receives next (docs/push.md, "Confirmations"). The
 * decision depends only on the journal, never on when the consumer asks, so
 * a resumed consumer gets exactly what it would have got without the break.
 */
import type { JournalEntry } from '@/db/queries/activity-journal'
import type { StandardFilter } from '@/db/queries/collections'
import type { JournalSource } from './journal-tail'

export interface ConsumerFilter {
  collection?: string | undefined
  eventType?: string | undefined
  /** Token standards sent; ERC-721 only when absent, as /v1/activity (docs/api.md, "ERC-1155"). */
  standard?: StandardFilter | undefined
  /** Blocks on top of an addition's block before it is sent (0: at once). */
  minConfirmations: number
}

export interface NextEvents {
  /** To send, in order. */
  entries: JournalEntry[]
  /** The consumer's new position: the seq of the last entry sent or passed over. */
  cursor: bigint
  /** An addition waits for confirmations: read again when the head moves. */
  waiting: boolean
}

const identity = (e: Pick<JournalEntry, 'transaction_hash' | 'log_index' | 'batch_index' | 'block_hash'>) =>
  `${e.transaction_hash}:${e.log_index}:${e.batch_index}:${e.block_hash}`

/**
 * The entries after `after` that the consumer receives now, at most `limit`
 * read. With `minConfirmations` m:
 *  - an addition is sent once its block has m blocks on top; when a removal
 *    of it is already journaled, only if it had them before the removal
 *    (the removal's head_block), and otherwise never;
 *  - a removal is sent when its addition was (or would have been) sent by
 *    that rule: it carries the addition's block and the head it was
 *    recorded at;
 *  - the first addition still short of confirmations stops the read
 *    (journal order is kept: later entries wait behind it).
 */
export async function nextEvents(
  source: JournalSource,
  head: bigint,
  after: bigint,
  filter: ConsumerFilter,
  limit = 500,
): Promise<NextEvents> {
  const rows = await source.read({
    after,
    limit,
    collection: filter.collection,
    eventType: filter.eventType,
    standard: filter.standard ?? 'ERC721',
  })
  const m = BigInt(Math.max(0, filter.minConfirmations))
  const additions = rows.filter((r) => r.kind === 'added')
  const removals = m > 0n ? await source.removalsOf(additions) : []
  const removalsByEvent = new Map<string, typeof removals>()
  for (const r of removals) {
    const key = identity(r)
    removalsByEvent.set(key, [...(removalsByEvent.get(key) ?? []), r])
  }
  const confirmedBefore = (blockNumber: string, headBlock: string) =>
    BigInt(headBlock) - BigInt(blockNumber) >= m

  const entries: JournalEntry[] = []
  let cursor = after
  for (const row of rows) {
    const seq = BigInt(row.seq)
    if (m === 0n) {
      entries.push(row)
    } else if (row.kind === 'added') {
      const removal = removalsByEvent.get(identity(row))?.find((e) => BigInt(e.seq) > seq)
      if (removal) {
        if (confirmedBefore(row.block_number, removal.head_block)) entries.push(row)
      } else if (head - BigInt(row.block_number) >= m) {
        entries.push(row)
      } else {
        return { entries, cursor, waiting: true }
      }
    } else if (confirmedBefore(row.block_number, row.head_block)) {
      entries.push(row)
    }
    cursor = seq
  }
  return { entries, cursor, waiting: false }
}
