import { z } from 'zod'
import { coverageStatus, decimalString, isoDateTime } from '@/lib/schemas'

export const rpcStatus = z.enum(['ok', 'degraded', 'behind', 'unreachable', 'unknown'])

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
    last_verified_block: decimalString
      .nullable()
      .describe(
        'Extension: blocks from coverage_start_block to this one were verified (`verified_by` says how); no block above it counts as confirmed.',
      ),
    verification_mismatches: decimalString.describe(
      'Extension: how often two reads of the same blocks, or reads and a receipts proof, disagreed (a provider left out or altered a log).',
    ),
    verification_repairs: decimalString.describe(
      'Extension: how often stored rows were repaired after such a disagreement.',
    ),
    verified_by: z
      .array(
        z.object({
          from_block: decimalString,
          to_block: decimalString,
          method: z
            .enum(['receipts_proof', 'second_endpoint', 'sampled_proof', 'repeated_reads', 'mixed'])
            .describe(
              "`receipts_proof`: every block proven by its receipts against its header's receiptsRoot; `second_endpoint`: reads served by two or more endpoints agreed; `sampled_proof`: reads of one endpoint agreed and a random share `proof_sample_rate` of the blocks was proven by receipts; `repeated_reads`: reads of one endpoint agreed, nothing proven (the node offers no receipts); `mixed`: neighbouring spans of several of these, merged to keep the list short.",
            ),
          proof_sample_rate: z
            .number()
            .nullable()
            .describe(
              "Share of the span's blocks proven by receipts at random on top of the reads; null when none.",
            ),
        }),
      )
      .describe(
        'Extension: how the verified blocks were verified, as contiguous spans in block order; a block no span covers names no method.',
      ),
    log_index_untrusted: z
      .boolean()
      .describe(
        'Extension: true once a receipts proof showed that reads which agreed lacked logs (a broken log index); every block is then proven by receipts, and blocks verified by reads are proven again.',
      ),
    head_age_seconds: z
      .number()
      .int()
      .nullable()
      .describe(
        'Extension: seconds since an RPC endpoint last answered the head; null before the first answer.',
      ),
    rpc_status: rpcStatus.describe(
      'Extension: `ok`; `degraded` (some endpoints failing, rate-limited or behind); `behind` (every endpoint lagging or syncing); `unreachable` (no endpoint has answered the head for 30 s, or the indexer is not running); `unknown` (no answer yet).',
    ),
    rpc_endpoints: z
      .array(
        z.object({
          endpoint: z.number().int().describe('Position in the configured endpoint list, from 1.'),
          state: z.enum(['ok', 'lagging', 'rate_limited', 'failing', 'syncing']),
          head: decimalString
            .nullable()
            .describe('Highest block this endpoint has reported that a node serves a block at.'),
        }),
      )
      .describe('Extension: each configured RPC endpoint as the indexer last saw it.'),
    metadata_backlog: z
      .object({
        pending: z.number().int().describe('Never fetched yet.'),
        timeout: z.number().int().describe('Timed out (or its host did), to be tried again.'),
        http_error: z.number().int().describe('Transient HTTP or connection failure, to be tried again.'),
      })
      .nullable()
      .describe(
        'Extension: tokens whose metadata is still queued, by current outcome; null before the metadata queue first reported.',
      ),
    metadata_hosts_backed_off: z
      .array(
        z.object({
          host: z
            .string()
            .describe(
              'host:port of a metadata host, or `ipfs-gateway-N` / `arweave-gateway-N` for a configured gateway.',
            ),
          state: z
            .enum(['open', 'half_open'])
            .describe('`open`: not asked until `until`; `half_open`: one probe allowed.'),
          until: isoDateTime,
          outcome: z.string().describe('What the host last did: `timeout` or `http_error`.'),
        }),
      )
      .describe(
        'Extension: metadata hosts the indexer has backed off after repeated failures (at most 100).',
      ),
  })
  .meta({ id: 'IndexerStatus' })

export const statusOutput = z.object({ data: indexerStatus })

export type IndexerStatus = z.infer<typeof indexerStatus>
