import type pg from 'pg'
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import {
  markCollectionFailed,
  pendingCollections,
  refreshFallbackImages,
  saveCollectionInfo,
} from '../store/collections'
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
  const rows = await pendingCollections(deps.pool, limit)
  for (const row of rows) {
    try {
      await processCollection(
        deps,
        row.address,
        row.first_seen_block === null ? null : BigInt(row.first_seen_block),
      )
    } catch (err) {
      deps.logger.warn({ collection: row.address }, `collection info failed: ${describeError(err)}`)
      await markCollectionFailed(deps.pool, row.address)
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
  await saveCollectionInfo(deps.pool, address, {
    name: nameText,
    symbol: symbolText || null,
    contractUri: uri,
    description,
    image,
    deployBlock: deploy?.deployBlock?.toString() ?? null,
    creatorAddress: deploy?.creatorAddress ?? null,
    deployTxHash: deploy?.deployTxHash ?? null,
  })
  // The lowest token's image stands in for a collection image the contract does not declare.
  if (!image) await refreshFallbackImages(deps.pool, [address])
}
