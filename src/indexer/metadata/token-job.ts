import type pg from 'pg'
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import { backoffDelay } from '../rpc/retry'
import { type DueTokenRow, selectDueTokens, selectTokenUriSources } from '../store/metadata-queue'
import { selectPriorityTokens } from '../store/metadata-refresh'
import { type FetchLimits, fetchMetadataJson, imageOf, loadUriBytes } from './document'
import { HostBackedOff } from './host-scheduler'
import { MediaUpload } from './media-store'
import { type NormalizedMetadata, normalizeMetadata } from './normalize'
import { FetchFailure, type MetadataOutcome } from './outcome'
import { recheckAt } from './recheck'
import { toValidUri } from './resolve-uri'
import {
  batchViewCalls,
  type CallResult,
  cleanText,
  decodeUriResult,
  encodeErc1155Uri,
  encodeTokenUri,
  expandIdPlaceholder,
} from './token-uri'

/**
 * One token's metadata job: taken from the queue (dueTokens), its tokenURI
 * (for an ERC-1155 token its newest URI event, else uri(id)) read (readUris, in batches), its document and image fetched (processToken).
 * What it comes to is written by token-outcomes.ts.
 */

export interface TokenJobDeps {
  pool: pg.Pool
  rpc: Rpc
  logger: Logger
  limits: FetchLimits
  mediaDir: string
  multicallEnabled: () => boolean
  /** Attempts before a transient failure becomes final. */
  maxAttempts: number
  /** First retry delay; doubles per attempt (with jitter) up to an hour. */
  retryBaseMs: number
  /** Requests in flight over all hosts (when no scheduler is given in limits). */
  concurrency: number
  /** Waits before re-checking a settled outcome (default recheck.ts, RECHECK_DELAYS_MS). */
  recheckDelaysMs?: readonly number[]
  signal?: AbortSignal
}

export interface TokenJob {
  id: string
  collection: Hex
  tokenId: bigint
  attempts: number
  /** Text form keeps PostgreSQL's microseconds for the equality check on save. */
  nextAttemptAt: string
  /** A settled outcome checked again (metadata_recheck_at): no quick retries, not in the backlog. */
  recheck: boolean
  /**
   * Set for a media retry: an `ok` token due by metadata_recheck_at, which only
   * a busy media host puts there (fetchTokenMedia). Its stored locations are
   * fetched again (retryMedia), not its document.
   */
  media: StoredMediaLocations | null
}

/** A token's stored image_url and animation_url. */
export interface StoredMediaLocations {
  imageUrl: string | null
  animationUrl: string | null
}

export interface TokenResult {
  outcome: MetadataOutcome
  uri: string | null
  metadata: Record<string, unknown> | null
  /** The document's fields served beside name and image (normalize.ts). */
  normalized: NormalizedMetadata | null
  name: string | null
  imageUrl: string | null
  mediaSha256: string | null
  retryAt: Date | null
  /** Settled, to be checked again then (recheck.ts); null: final. */
  recheckAt: Date | null
  /**
   * Not tried: its host is backed off (`open`: a still-pending token takes the
   * host's outcome) or already has enough queued (`busy`). Attempts are not
   * counted; the token comes back at retryAt.
   */
  deferred: HostBackedOff | null
}

/** tokenURI reads per call (Multicall3 aggregate or one JSON-RPC batch). */
export const URI_BATCH = 50

/** The due tokens in index order (store/metadata-queue.ts); tokens already in memory are skipped. */
export async function dueTokens(
  pool: pg.Pool,
  limit: number,
  skipIds: string[] = [],
  skipCollections: string[] = [],
): Promise<TokenJob[]> {
  const rows = await selectDueTokens(pool, limit, skipIds, skipCollections)
  return rows.map((r) => toJob(r, r.recheck))
}

/** Tokens refreshed on request, due ahead of the backlog (store/metadata-refresh.ts). */
export async function priorityTokens(pool: pg.Pool, limit: number, skipIds: string[]): Promise<TokenJob[]> {
  const rows = await selectPriorityTokens(pool, limit, skipIds)
  return rows.map((r) => toJob(r, false))
}

function toJob(r: DueTokenRow, recheck: boolean): TokenJob {
  return {
    id: r.id,
    collection: r.collection_address,
    tokenId: BigInt(r.token_id),
    attempts: r.metadata_attempts,
    nextAttemptAt: r.next_at,
    recheck,
    media:
      recheck && r.media_retry
        ? { imageUrl: r.image_url ?? null, animationUrl: r.animation_url ?? null }
        : null,
  }
}

/** A token's metadata URI as read, before it is decoded (uriOf). */
export interface UriRead {
  /** An ERC-1155 token: its URI is a template whose `{id}` is expanded. */
  erc1155: boolean
  /** ERC-1155: the value of the token's newest URI event; when set, no call was made. */
  eventUri: string | null
  /** What tokenURI(id) (ERC-1155: uri(id)) returned; null when it reverted or was not called. */
  result: CallResult
}

/**
 * The tokens' URIs, in the order of `jobs`: an ERC-1155 token's newest URI
 * event where there is one (erc1155_uris), else a view call, batched:
 * tokenURI(id), or uri(id) for an ERC-1155 token (docs/metadata.md, "ERC-1155").
 */
export async function readUris(deps: TokenJobDeps, jobs: TokenJob[]): Promise<UriRead[]> {
  const sources = await selectTokenUriSources(deps.pool, jobs)
  const reads: UriRead[] = sources.map((s) => ({ erc1155: s.erc1155, eventUri: s.eventUri, result: null }))
  const toCall = jobs.flatMap((job, i) => (reads[i]!.eventUri === null ? [{ job, read: reads[i]! }] : []))
  const chunks: (typeof toCall)[] = []
  for (let i = 0; i < toCall.length; i += URI_BATCH) chunks.push(toCall.slice(i, i + URI_BATCH))
  const results = await Promise.all(
    chunks.map((chunk) =>
      batchViewCalls(
        deps.rpc,
        chunk.map(({ job, read }) => ({
          to: job.collection,
          data: read.erc1155 ? encodeErc1155Uri(job.tokenId) : encodeTokenUri(job.tokenId),
        })),
        deps.multicallEnabled(),
      ),
    ),
  )
  results.flat().forEach((result, i) => {
    toCall[i]!.read.result = result
  })
  return reads
}

/**
 * The token's metadata URI, or the failure it stands for. An ERC-1155 URI
 * (a URI event's, else uri(id)) has every `{id}` expanded; the expanded URI is
 * held to the same size limit.
 */
export function uriOf(read: UriRead, tokenId: bigint, maxChars: number): string {
  if (!read.erc1155) return decodeUriResult(read.result, maxChars)
  const template = read.eventUri ?? decodeUriResult(read.result, maxChars, 'uri')
  const uri = expandIdPlaceholder(template, tokenId)
  if (uri.length > maxChars) throw new FetchFailure('too_large', `uri exceeds ${maxChars} bytes`)
  return uri
}

/** Up to a tenth of a wait more, so a host's tokens do not all come back at the same instant. */
export const jitter = (waitMs: number) => Math.max(0, waitMs) * 0.1 * Math.random()

export async function processToken(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: TokenJob,
  uriRead: UriRead,
): Promise<TokenResult> {
  const result = emptyResult()
  try {
    const uri = uriOf(uriRead, job.tokenId, limits.maxMetadataBytes)
    result.uri = cleanText(uri, limits.maxMetadataBytes) || null
    if (!result.uri) throw new FetchFailure('invalid_uri', 'tokenURI is empty')
    const doc = await fetchMetadataJson(result.uri, limits, job.collection)
    result.metadata = doc
    result.normalized = normalizeMetadata(doc)
    result.name = typeof doc.name === 'string' ? cleanText(doc.name) || null : null
    const image = imageOf(doc)
    result.imageUrl = image === null ? null : toValidUri(image)
    // Stored under the location the API serves (image_url, media_url), not as declared; the
    // animation beside it, under its normalized animation_url (docs/metadata.md, "Animations").
    await fetchTokenMedia(deps, limits, job, result, result.normalized?.animationUrl ?? null)
    return result
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    if (err instanceof HostBackedOff) {
      result.outcome = 'pending'
      result.deferred = err
      result.retryAt = new Date(err.until + jitter(err.until - Date.now()))
      return result
    }
    result.outcome = err.outcome
    if (err.transient && !job.recheck && job.attempts + 1 < deps.maxAttempts) {
      result.retryAt = new Date(Date.now() + backoffDelay(job.attempts, deps.retryBaseMs, 3_600_000))
    } else {
      const quick = err.transient ? deps.maxAttempts : 1
      result.recheckAt = recheckAt(err.outcome, job.attempts + 1, quick, deps.recheckDelaysMs)
    }
    deps.logger.debug(
      {
        collection: job.collection,
        tokenId: job.tokenId.toString(),
        outcome: err.outcome,
        retry: result.retryAt !== null,
        recheck: result.recheckAt !== null,
      },
      `token metadata: ${describeError(err)}`,
    )
    return result
  }
}

/**
 * A media retry (TokenJob.media): the image and animation of a token whose
 * document is stored, fetched again because their host was busy the last
 * time; the document is not fetched again.
 */
export async function retryMedia(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: TokenJob,
  media: StoredMediaLocations,
): Promise<TokenResult> {
  const result = emptyResult()
  result.imageUrl = media.imageUrl
  await fetchTokenMedia(deps, limits, job, result, media.animationUrl)
  return result
}

/** A token's result before anything is known of it: `ok`, nothing fetched. */
export function emptyResult(): TokenResult {
  return {
    outcome: 'ok',
    uri: null,
    metadata: null,
    normalized: null,
    name: null,
    imageUrl: null,
    mediaSha256: null,
    retryAt: null,
    recheckAt: null,
    deferred: null,
  }
}

/**
 * Fetches and stores the token's image (result.imageUrl) and animation side
 * by side. When a host was too busy to take one (HostBackedOff `busy`: a slow
 * media host), the token is settled all the same and comes back as a media
 * retry at the turn the host gave it (result.recheckAt): its tokens never wait
 * in memory for a slow media host (docs/metadata.md, "Slow media hosts").
 */
async function fetchTokenMedia(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: TokenJob,
  result: TokenResult,
  animationUrl: string | null,
): Promise<void> {
  const [image, animation] = await Promise.all([
    result.imageUrl ? fetchMedia(deps, limits, job, result.imageUrl, 'image') : null,
    animationUrl && animationUrl !== result.imageUrl
      ? fetchMedia(deps, limits, job, animationUrl, 'animation')
      : null,
  ])
  result.mediaSha256 = image?.sha256 ?? null
  const busyUntil = Math.max(image?.busyUntil ?? 0, animation?.busyUntil ?? 0)
  if (busyUntil > 0) result.recheckAt = new Date(busyUntil)
}

interface MediaFetch {
  sha256: string | null
  /** Not fetched: its host was busy; worth trying again at this time. */
  busyUntil: number | null
}

/**
 * Media fetch failures do not fail the metadata: the image URL (or animation_url)
 * is still served, only without stored bytes. A failure to store the bytes
 * (the disk, the database) is thrown: the token is processed again once the
 * fault clears (docs/metadata.md, "Outcomes"). An animation may be larger
 * (maxAnimationBytes); bodies stream to disk, so no fetch waits for memory.
 */
async function fetchMedia(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: TokenJob,
  url: string,
  kind: 'image' | 'animation',
): Promise<MediaFetch> {
  const fetchAndStore = async () => {
    const maxBytes =
      kind === 'animation' ? (limits.maxAnimationBytes ?? limits.maxMediaBytes) : limits.maxMediaBytes
    const upload = new MediaUpload(deps.mediaDir)
    try {
      await loadUriBytes(url, maxBytes, limits, job.collection, {
        finishing: true,
        sink: () => upload.sink(),
      })
      const stored = await upload.store(deps.pool, url, kind, limits.animationSlots)
      return { sha256: stored?.sha256 ?? null, busyUntil: null }
    } finally {
      await upload.discard()
    }
  }
  try {
    return await fetchAndStore()
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    deps.logger.debug(
      { collection: job.collection, tokenId: job.tokenId.toString(), outcome: err.outcome, kind },
      `token ${kind} not stored: ${describeError(err)}`,
    )
    // A busy host gives the turn to come back at; a fetch cut by shutdown comes back at once.
    if (limits.signal?.aborted) return { sha256: null, busyUntil: Date.now() }
    const busy = err instanceof HostBackedOff && err.reason === 'busy'
    return { sha256: null, busyUntil: busy ? err.until : null }
  }
}
