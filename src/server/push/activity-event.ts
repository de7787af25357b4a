/**
 * The event that push delivery sends (docs/push.md): the live stream's
 * `data:` and a webhook's body are this same JSON. Built from an activity
 * journal entry (src/db/queries/activity-journal.ts); its id is the entry's
 * seq, the same for every delivery of that event.
 */
import { z } from 'zod'
import type { JournalEntry } from '@/db/queries/activity-journal'
import { activityItem } from '@/server/api/v1/transfers/transfer.schema'
import { toTransfer } from '@/server/api/v1/transfers/transfer-shape'

export const pushEventType = z
  .enum(['activity.added', 'activity.removed'])
  .describe(
    '`activity.added`: the transfer became canonical. `activity.removed`: a reorganisation took away a transfer that was announced before (same identity and `block_hash`).',
  )
export type PushEventType = z.infer<typeof pushEventType>

export const pushEvent = z
  .object({
    id: z
      .string()
      .regex(/^[1-9][0-9]*$/)
      .describe(
        'The event id (increasing): the resume point of the stream, the idempotency key of a webhook.',
      ),
    type: pushEventType,
    timestamp: z.string().describe('When the change was recorded (RFC 3339, UTC).'),
    data: activityItem
      .extend({
        block_hash: z
          .string()
          .nullable()
          .describe(
            'Hash of the block holding the event: a reorg that moves a transaction to another block removes the old one.',
          ),
      })
      .describe(
        'The activity record as `/v1/activity` shows it, with `confirmations` when the event was sent.',
      ),
  })
  .meta({ id: 'ActivityPushEvent' })
export type PushEvent = z.infer<typeof pushEvent>

/** `extended`: the consumer named a `standard`: the record carries `amount`, as on /v1/activity. */
export function toPushEvent(entry: JournalEntry, network: string, head: bigint, extended = false): PushEvent {
  return {
    id: entry.seq,
    type: entry.kind === 'added' ? 'activity.added' : 'activity.removed',
    timestamp: entry.recorded_at,
    data: {
      ...toTransfer(entry, network, head, extended),
      collection_name: entry.collection_name ?? '',
      block_hash: entry.block_hash,
    },
  }
}

/**
 * Whether an entry may be delivered to a consumer that asked for
 * `minConfirmations`: an addition once its block has that many blocks on top
 * (as `confirmations` counts them), a removal at once.
 */
export function deliverable(
  entry: Pick<JournalEntry, 'kind' | 'block_number'>,
  head: bigint,
  minConfirmations: number,
) {
  if (entry.kind === 'removed' || minConfirmations <= 0) return true
  return head - BigInt(entry.block_number) >= BigInt(minConfirmations)
}
