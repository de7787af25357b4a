import type pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '@/config/env'
import { describeError, isAbortError } from '../errors'
import type { Rpc } from '../rpc/client'
import { backoffDelay, sleep } from '../rpc/retry'
import { processCollections } from './collection-info'
import { type FetchLimits, gatewayHosts } from './document'
import { parseAllowHosts } from './safe-fetch'
import { processTokens } from './token-metadata'
import { hasMulticall3 } from './token-uri'

export interface MetadataQueueOptions {
  idleMs?: number
  concurrency?: number
  timeoutMs?: number
  maxMetadataBytes?: number
  maxMediaBytes?: number
  maxAttempts?: number
  retryBaseMs?: number
}

export function fetchLimitsFromConfig(
  config: Config,
  options: MetadataQueueOptions = {},
  signal?: AbortSignal,
): FetchLimits {
  const gateways = { ipfs: config.IPFS_GATEWAY, arweave: config.ARWEAVE_GATEWAY }
  return {
    gateways,
    // Gateways are the operator's choice, not chain data: they may be private.
    allowHosts: parseAllowHosts([...config.FETCH_ALLOW_HOSTS, ...gatewayHosts(gateways)]),
    timeoutMs: options.timeoutMs ?? 15_000,
    maxMetadataBytes: options.maxMetadataBytes ?? 1024 * 1024,
    maxMediaBytes: options.maxMediaBytes ?? 20 * 1024 * 1024,
    signal,
  }
}

/**
 * The metadata and media queue, inside the indexer process but off the
 * ingestion path: it works from tokens.metadata_status, with its own RPC
 * client, so slow or hostile metadata hosts never delay block processing.
 */
export async function runMetadataQueue(
  deps: {
    config: Config
    pool: pg.Pool
    rpc: Rpc
    logger: Logger
    signal: AbortSignal
    /** While true (backfill), the queue slows to one batch per idle period so ingestion comes first. */
    yieldToSync?: () => boolean
  },
  options: MetadataQueueOptions = {},
): Promise<void> {
  const { config, pool, rpc, signal } = deps
  const logger = deps.logger.child({ component: 'metadata' })
  const limits = fetchLimitsFromConfig(config, options, signal)
  let multicall: boolean | null = null
  let failures = 0
  while (!signal.aborted) {
    try {
      if (multicall === null) {
        multicall = await hasMulticall3(rpc)
        logger.info(`tokenURI reads via ${multicall ? 'Multicall3' : 'batched eth_call'}`)
      }
      const common = { pool, rpc, logger, limits, multicallEnabled: () => multicall === true }
      const collections = await processCollections(common)
      const tokens = await processTokens({
        ...common,
        mediaDir: config.MEDIA_DIR,
        maxAttempts: options.maxAttempts ?? 5,
        retryBaseMs: options.retryBaseMs ?? 30_000,
        concurrency: options.concurrency ?? 8,
        signal,
      })
      failures = 0
      if ((collections === 0 && tokens === 0) || deps.yieldToSync?.())
        await sleep(options.idleMs ?? 1_000, signal)
    } catch (err) {
      if (signal.aborted || isAbortError(err)) break
      const delay = backoffDelay(failures++, 1_000, 60_000)
      logger.warn({ retryInMs: Math.round(delay) }, `metadata queue step failed: ${describeError(err)}`)
      await sleep(delay, signal).catch(() => undefined)
    }
  }
}
