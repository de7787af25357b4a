import { z } from 'zod'
import {
  address,
  beforeIdParam,
  beforeTimestampParam,
  CURSOR_GROUPS,
  decimalString,
  isoDateTime,
  limitParam,
  pageOf,
  requireTogether,
  type StandardParam,
  standardParam,
  timeCursor,
  tokenId,
  transferEventType,
  txHash,
} from '@/lib/schemas'

export const transferFields = {
  collection_address: address,
  token_id: tokenId,
  network: z.string(),
  from_address: address.describe('The zero address for a mint.'),
  to_address: address.describe('The zero address for a burn.'),
  event_type: transferEventType.describe(
    'From the zero address: mint; to the zero address: burn; otherwise transfer.',
  ),
  block_number: decimalString.describe(
    "Decimal string; '0' for imported historical rows whose block is unknown.",
  ),
  log_index: z.int().min(0),
  batch_index: z
    .int()
    .min(0)
    .describe(
      'Extension: position inside one log — 0, or the offset in an ERC-2309 range, where one log moves many tokens. (transaction_hash, log_index, batch_index) identifies a row.',
    ),
  transaction_hash: txHash,
  block_timestamp: isoDateTime,
  confirmations: z
    .int()
    .min(0)
    .nullable()
    .describe(
      'Blocks mined on top of the event (X-Chain-Head minus block_number; 0 in the head block). Null when the block number is unknown — null is not zero.',
    ),
  amount: decimalString
    .describe(
      "Extension, with `standard` only: how many of the token moved — ERC-1155: the value of the id/value pair (each pair of a TransferBatch is its own record, `batch_index` its position in the batch); ERC-721: '1'.",
    )
    .optional(),
}

const transferExample = {
  collection_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  token_id: '17',
  network: 'devnet',
  from_address: '0x0000000000000000000000000000000000000000',
  to_address: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  event_type: 'mint',
  block_number: '1204',
  log_index: 3,
  batch_index: 0,
  transaction_hash: '0x4c1d0a3a5e7b9c2f6d8e0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d',
  block_timestamp: '2026-01-02T03:04:05.000Z',
  confirmations: 12,
}

export const transfer = z.object(transferFields).meta({ id: 'Transfer', example: transferExample })

export type Transfer = z.infer<typeof transfer>

export const activityItem = z
  .object({ ...transferFields, collection_name: z.string().describe("The collection's name; '' when none.") })
  .meta({ id: 'ActivityItem', example: { ...transferExample, collection_name: 'Genesis Pioneers' } })

export type ActivityItem = z.infer<typeof activityItem>

export const transferPage = pageOf(transfer, timeCursor).meta({ id: 'TransferPage' })
export type TransferPage = z.infer<typeof transferPage>

const feedParams = {
  limit: limitParam,
  before_timestamp: beforeTimestampParam,
  before_id: beforeIdParam,
  standard: standardParam,
}

const together = (value: Record<string, unknown>, ctx: z.RefinementCtx) =>
  requireTogether(value, CURSOR_GROUPS.time, ctx)

export const collectionTransfersInput = z
  .strictObject({ address: address.describe('Contract address, lowercase.'), ...feedParams })
  .superRefine(together)

export const tokenTransfersInput = z
  .strictObject({
    address: address.describe('Contract address, lowercase.'),
    tokenId: tokenId.describe('Decimal token id, 1 to 78 digits.'),
    ...feedParams,
  })
  .superRefine(together)

export type TransferFeedInput = {
  address: string
  tokenId?: string
  limit?: number | undefined
  before_timestamp?: number | undefined
  before_id?: number | undefined
  standard?: StandardParam | undefined
}
