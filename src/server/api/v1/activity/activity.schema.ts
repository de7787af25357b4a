import { z } from 'zod'
import {
  address,
  beforeIdParam,
  beforeTimestampParam,
  CURSOR_GROUPS,
  limitParam,
  networkParam,
  pageOf,
  requireTogether,
  standardParam,
  timeCursor,
  transferEventType,
} from '@/lib/schemas'
import { activityItem } from '@/server/api/v1/transfers/transfer.schema'

export const activityInput = z
  .strictObject({
    limit: limitParam,
    before_timestamp: beforeTimestampParam,
    before_id: beforeIdParam,
    network: networkParam,
    collection: address.describe('Only events of this contract (lowercase address).').optional(),
    event_type: transferEventType.describe('Only events of this type: mint, transfer or burn.').optional(),
    standard: standardParam,
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.time, ctx))

export type ActivityInput = z.infer<typeof activityInput>

export const activityPage = pageOf(activityItem, timeCursor).meta({ id: 'ActivityPage' })
export type ActivityPage = z.infer<typeof activityPage>
