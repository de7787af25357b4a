import type pg from 'pg'
import type { Logger } from 'pino'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import { backoffDelay } from '../rpc/retry'
import {
  type CollectionRead,
  markCollectionFailed,
  pendingCollections,
  refreshFallbackImages,
  saveCollectionInfo,
} from '../store/collections'
import { findDeployInfo } from './deploy-info'
import { type FetchLimits, fetchMetadataJson, imageOf } from './document'
import { FetchFailure } from './outcome'
import { toValidUri } from './resolve-uri'
import { batchViewCalls, cleanText, decodeLooseString, decodeUriResult, encodeNoArg } from './token-uri'

export interface CollectionJobDeps {
  pool: pg.Pool
  rpc: Rpc
  logger: Logger
  limits: FetchLimits
  multicallEnabled: () => boolean
  /** First wait after a failed read (default COLLECTION_RETRY_BASE_MS). */
  retryBaseMs?: number
}

/** First wait after a failed collection read; it doubles (half of it random) up to an hour. */
export const COLLECTION_RETRY_BASE_MS = 60_000
export const COLLECTION_RETRY_MAX_MS = 3_600_000

/**
 * Reads what a collection says about itself: name() and symbol() (bytes32
 * tolerated, missing = ''), contractURI() metadata (description, image),
 * and the deploy block, creator and creating transaction. A read is final
 * once the chain answered: a call that reverts or returns nothing proves
 * there is no name (stored as ''). An RPC error proves nothing: the
 * collection is marked failed and read again with backoff, indefinitely
 * (docs/metadata.md, "Freshness"); so is one whose contractURI document
 * failed transiently (its name and symbol are saved meanwhile). ERC-7572
 * ContractURIUpdated asks again; a read begun before the request stores
 * what it read and leaves the collection due (saveCollectionInfo).
 */
export async function processCollections(deps: CollectionJobDeps, limit = 10): Promise<number> {
  const rows = await pendingCollections(deps.pool, limit)
  for (const row of rows) {
    const read = { address: row.address, requests: row.metadata_requests }
    try {
      await processCollection(
        deps,
        read,
        row.first_seen_block === null ? null : BigInt(row.first_seen_block),
        () => retryAt(deps, row.metadata_attempts),
      )
    } catch (err) {
      // Cut short by shutdown: nothing is recorded, the collection is simply read after a restart.
      if (deps.limits.signal?.aborted) throw err
      deps.logger.warn(
        { collection: row.address, attempts: row.metadata_attempts + 1 },
        `collection info failed, to be read again: ${describeError(err)}`,
      )
      await markCollectionFailed(deps.pool, read, retryAt(deps, row.metadata_attempts))
    }
  }
  return rows.length
}

/** When a collection whose read failed `attempts` times before is read again. */
function retryAt(deps: CollectionJobDeps, attempts: number): Date {
  const base = deps.retryBaseMs ?? COLLECTION_RETRY_BASE_MS
  return new Date(Date.now() + backoffDelay(Math.min(attempts, 30), base, COLLECTION_RETRY_MAX_MS))
}

async function processCollection(
  deps: CollectionJobDeps,
  read: CollectionRead,
  firstSeenBlock: bigint | null,
  nextRetry: () => Date,
) {
  const { address } = read
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
  /** The document's host failed transiently: read again later, the stored description kept. */
  let documentLater = false
  if (uri) {
    try {
      const doc = await fetchMetadataJson(uri, deps.limits, address)
      description = typeof doc.description === 'string' ? cleanText(doc.description, 10_000) || null : null
      const declared = imageOf(doc)
      image = declared === null ? null : toValidUri(declared)
    } catch (err) {
      deps.logger.info({ collection: address }, `contractURI metadata unavailable: ${describeError(err)}`)
      documentLater = err instanceof FetchFailure && err.transient
    }
  }
  const deploy =
    firstSeenBlock !== null && firstSeenBlock > 0n
      ? await findDeployInfo(deps.rpc, address, firstSeenBlock)
      : null
  await saveCollectionInfo(deps.pool, read, {
    name: nameText,
    symbol: symbolText || null,
    contractUri: uri,
    description,
    image,
    deployBlock: deploy?.deployBlock?.toString() ?? null,
    creatorAddress: deploy?.creatorAddress ?? null,
    deployTxHash: deploy?.deployTxHash ?? null,
    documentRead: !documentLater,
    retryAt: documentLater ? nextRetry() : null,
  })
  // The lowest token's image stands in for a collection image the contract does not declare.
  if (!image) await refreshFallbackImages(deps.pool, [address])
}
