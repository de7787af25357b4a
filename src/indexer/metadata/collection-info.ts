import type pg from 'pg'
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import { findDeployInfo } from './deploy-info'
import { type FetchLimits, fetchMetadataJson, imageOf } from './document'
import { toValidUri } from './resolve-uri'
import { batchViewCalls, cleanText, decodeLooseString, decodeUriResult, encodeNoArg } from './token-uri'

export interface CollectionJobDeps {
  pool: pg.Pool
  rpc: Rpc
  logger: Logger
  limits: FetchLimits
  multicallEnabled: () => boolean
}

/**
 * Reads what a collection says about itself: name() and symbol() (bytes32
 * tolerated, missing = ''), contractURI() metadata (description, image),
 * and the deploy block, creator and creating transaction. Collections are
 * read once; metadata_status records ok, or failed after RPC trouble.
 */
export async function processCollections(deps: CollectionJobDeps, limit = 10): Promise<number> {
  const { rows } = await deps.pool.query<{ address: Hex; first_seen_block: string | null }>(
    `SELECT address, first_seen_block::text FROM collections WHERE metadata_status = 'pending'
      ORDER BY id LIMIT $1`,
    [limit],
  )
  for (const row of rows) {
    try {
      await processCollection(
        deps,
        row.address,
        row.first_seen_block === null ? null : BigInt(row.first_seen_block),
      )
    } catch (err) {
      deps.logger.warn({ collection: row.address }, `collection info failed: ${describeError(err)}`)
      await deps.pool.query(
        `UPDATE collections SET metadata_status = 'failed', updated_at = now() WHERE address = $1`,
        [row.address],
      )
    }
  }
  return rows.length
}

async function processCollection(deps: CollectionJobDeps, address: Hex, firstSeenBlock: bigint | null) {
  const [name, symbol, contractUri] = await batchViewCalls(
    deps.rpc,
    (['name', 'symbol', 'contractURI'] as const).map((fn) => ({ to: address, data: encodeNoArg(fn) })),
    deps.multicallEnabled(),
  )
  const nameText = decodeLooseString(name!)
  const symbolText = decodeLooseString(symbol!)
  let uri: string | null = null
  try {
    uri = cleanText(decodeUriResult(contractUri!, 64 * 1024), 64 * 1024) || null
  } catch {
    uri = null
  }
  let description: string | null = null
  let image: string | null = null
  if (uri) {
    try {
      const doc = await fetchMetadataJson(uri, deps.limits, address)
      description = typeof doc.description === 'string' ? cleanText(doc.description, 10_000) || null : null
      const declared = imageOf(doc)
      image = declared === null ? null : toValidUri(declared)
    } catch (err) {
      deps.logger.info({ collection: address }, `contractURI metadata unavailable: ${describeError(err)}`)
    }
  }
  const deploy =
    firstSeenBlock !== null && firstSeenBlock > 0n
      ? await findDeployInfo(deps.rpc, address, firstSeenBlock)
      : null
  await deps.pool.query(
    `UPDATE collections SET name = $2, symbol = $3, listed = ($2 <> '' OR coalesce($3, '') <> ''),
            contract_uri = $4, description = $5,
            image_url = CASE WHEN $6::text IS NOT NULL THEN $6 ELSE image_url END,
            image_source = CASE WHEN $6::text IS NOT NULL THEN 'contract' ELSE image_source END,
            deploy_block = coalesce($7, deploy_block), creator_address = coalesce($8, creator_address),
            deploy_tx_hash = coalesce($9, deploy_tx_hash), metadata_status = 'ok', updated_at = now()
      WHERE address = $1`,
    [
      address,
      nameText,
      symbolText || null,
      uri,
      description,
      image,
      deploy?.deployBlock?.toString() ?? null,
      deploy?.creatorAddress ?? null,
      deploy?.deployTxHash ?? null,
    ],
  )
  // The lowest token's image stands in for a collection image the contract does not declare.
  if (!image) await refreshFallbackImages(deps.pool, [address])
}

/** Collection image from its lowest token id that has one, unless the contract declares its own. */
export async function refreshFallbackImages(pool: pg.Pool, collections: string[]): Promise<void> {
  if (collections.length === 0) return
  await pool.query(
    `UPDATE collections c SET image_url = low.image_url, image_source = 'token', updated_at = now()
       FROM (SELECT c2.address, (SELECT t.image_url FROM tokens t
                                  WHERE t.collection_address = c2.address AND t.image_url IS NOT NULL
                                  ORDER BY t.token_id LIMIT 1) AS image_url
               FROM collections c2
              WHERE c2.address = ANY($1::varchar[]) AND c2.image_source IS DISTINCT FROM 'contract') AS low
      WHERE c.address = low.address AND low.image_url IS NOT NULL AND c.image_url IS DISTINCT FROM low.image_url`,
    [collections],
  )
}
