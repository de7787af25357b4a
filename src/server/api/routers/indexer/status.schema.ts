import { z } from 'zod'
import { coverageStatus, decimalString, isoDateTime } from '@/lib/schemas'

export const statusInput = z.strictObject({
  network: z.string().max(64).optional().describe('The indexed network; any other value answers 404.'),
})

export const indexerStatus = z
  .object({
    network: z.string(),
    coverage_status: coverageStatus,
    coverage_start_block: decimalString.nullable(),
    last_confirmed_block: decimalString,
    last_seen_block: decimalString,
    coverage_verified_at: isoDateTime.nullable(),
    updated_at: isoDateTime,
    last_indexed_block: decimalString
      .nullable()
      .describe('Extension: highest block whose events are ingested; null before the first block.'),
    lag_blocks: decimalString.describe(
      'Extension: last_seen_block minus last_indexed_block (blocks not yet ingested).',
    ),
  })
  .meta({ id: 'IndexerStatus' })

export const statusOutput = z.object({ data: indexerStatus })

export type IndexerStatus = z.infer<typeof indexerStatus>
