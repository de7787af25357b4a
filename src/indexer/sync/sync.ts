import type { Hex } from 'viem'
import type { RpcBlock } from '../chain'
import { describeError, IndexerError, isAbortError } from '../errors'
import type { Endpoint } from '../rpc/endpoint'
import { backoffDelay } from '../rpc/retry'
import { StaleStateError } from '../store/commit'
import {
  readLastVerifiedBlock,
  readTip,
  readVerificationSpans,
  storedBlocks,
  updateHead,
} from '../store/state'
import { maxBig, minBig } from '../util/bigint'
import { sleep } from '../util/sleep'
import { VerificationError } from '../verify/agreed-logs'
import { InconsistentLogsError } from '../verify/log-set'
import { ChainChangedError, RangeTooLargeError } from './fetch'
import { syncHistorical } from './historical'
import { syncRealtime } from './realtime'
import { handleReorg, reorgLogging } from './reorg'
import { cursorOf, ReorgDetectedError, type Syncer } from './syncer'
import { reproveReadSpans, verifyConfirmedBlocks } from './verify-confirmed'

/** Endpoint health is written to indexer_state at most this often (and whenever the head moves). */
const HEALTH_WRITE_MS = 2_000

/**
 * The sync loop: backfill confirmed blocks by range, follow unconfirmed
 * blocks header by header, verify blocks as they reach the confirmation
 * depth, roll back on a reorganisation, and keep going through provider
 * faults (one log line each, exponential backoff).
 *
 * The head never runs backwards: a lower eth_blockNumber from a lagging node
 * is lag. Only a reorganisation proven by block hashes may lower it.
 */
export async function runSyncLoop(s: Syncer, signal: AbortSignal): Promise<void> {
  let failures = 0
  let supportsFinalized = true
  let healthWritten = 0
  let headObservedAt: Date | null = null
  const writeHealth = async (force: boolean) => {
    if (!force && Date.now() - healthWritten < HEALTH_WRITE_MS) return
    healthWritten = Date.now()
    await updateHead(s.ctx.pool, s.options.network, s.head.lastSeenBlock, {
      headObservedAt,
      endpoints: s.ctx.rpc.pool.summary(),
    })
  }
  // Reads that cannot be verified (every answer leaves a log out, or mixes two chains) hold back
  // the confirmed block, never the following of the head: verification waits and tries again by itself.
  let verifyFailures = 0
  let verifyAfter = 0
  const verify = async () => {
    if (Date.now() < verifyAfter) return
    try {
      await verifyConfirmedBlocks(s)
      await reproveReadSpans(s)
      verifyFailures = 0
    } catch (err) {
      if (!(err instanceof VerificationError || err instanceof InconsistentLogsError)) throw err
      const delay = backoffDelay(verifyFailures++, 500, 30_000)
      verifyAfter = Date.now() + delay
      s.ctx.logger.warn({ retryInMs: Math.round(delay) }, `verification waits: ${describeError(err)}`)
    }
  }
  while (!signal.aborted) {
    try {
      const [, finalizedBlock, nearTip] = await Promise.all([
        readHeads(s),
        supportsFinalized ? s.ctx.rpc.getBlock('finalized') : null,
        s.backfilling ? null : readNearTip(s),
      ])
      headObservedAt = new Date()
      const reported = await servedHead(s, nearTip?.next ?? null)
      let finalized = -1n
      if (finalizedBlock) finalized = finalizedBlock.number
      else supportsFinalized = false
      const head = maxBig(reported, s.head.lastSeenBlock)
      const deep = head - s.options.confirmations
      // Confirmed = CONFIRMATIONS deep, or finalized by the node if that comes sooner.
      const confirmedNow = finalized > deep ? (finalized > head ? head : finalized) : deep
      const confirmed = maxBig(confirmedNow, s.head.chainConfirmedBlock)
      const headMoved = head !== s.head.lastSeenBlock
      s.head = { lastSeenBlock: head, chainConfirmedBlock: confirmed }
      await writeHealth(headMoved)

      const cursor = cursorOf(s)
      const wasBackfilling = s.backfilling
      s.backfilling = cursor <= confirmed
      if (wasBackfilling && !s.backfilling) await logCaughtUp(s, cursor - 1n)
      if (s.tip && s.tip.number > head) {
        // Every endpoint is behind the stored tip (a restart onto a lagging node, or a shorter chain).
        await proveShorterChain(s)
        await sleep(s.options.pollIntervalMs, signal)
      } else if (cursor <= confirmed) {
        await syncHistorical(s, confirmed)
      } else if (cursor <= head) {
        await syncRealtime(s, head, nearTip?.next)
      } else {
        await verifyTip(s, nearTip?.tip)
        await verify()
        await sleep(s.options.pollIntervalMs, signal)
        failures = 0
        continue
      }
      await verify()
      failures = 0
    } catch (caught) {
      let err = caught
      if (signal.aborted || isAbortError(err)) break
      if (err instanceof ReorgDetectedError) {
        try {
          // Read again, without the endpoint that changed chains.
          if (await chainIdChanged(s)) continue
          forgetHeadsAboveChain(s)
          await handleReorg(
            { ...s.ctx, network: s.options.network, startBlock: s.options.startBlock },
            err.atBlock,
            s.head,
          )
          s.tip = await loadTip(s)
          s.verifiedThrough = await loadVerified(s)
          // Reads of orphaned blocks must not count towards their replacements' verification.
          s.ctx.followed.clear()
          continue
        } catch (rollbackErr) {
          if (signal.aborted) break
          err = rollbackErr
        }
      }
      if (err instanceof StaleStateError) {
        s.tip = await loadTip(s).catch(() => s.tip)
        s.verifiedThrough = await loadVerified(s).catch(() => s.verifiedThrough)
      }
      await writeHealth(true).catch(() => undefined)
      // Read again at once: the chain moved, or the range was shrunk to fit.
      const delay =
        err instanceof ChainChangedError || err instanceof RangeTooLargeError
          ? 200
          : backoffDelay(failures++, 500, 30_000)
      s.ctx.logger.warn({ retryInMs: Math.round(delay) }, `sync step failed: ${describeError(err)}`)
      await sleep(delay, signal).catch(() => undefined)
    }
  }
}

/**
 * One line when the backfill reaches the confirmed block: how its blocks were verified and
 * what the sample proved (docs/indexer.md, "Verification").
 */
async function logCaughtUp(s: Syncer, block: bigint) {
  const proofs = s.ctx.proofs
  if (!s.ctx.verify || !proofs) return
  const spans = await readVerificationSpans(s.ctx.pool, s.options.network)
  const verifiedBy = spans
    .map(
      (v) => `${v.from}..${v.to} ${v.method}${v.sampleRate === null ? '' : ` (sample rate ${v.sampleRate})`}`,
    )
    .join(', ')
  s.ctx.logger.info(
    {
      block: block.toString(),
      provenSamples: proofs.provenSamples,
      sampleRate: proofs.rate,
      untrusted: proofs.untrusted,
    },
    `backfill caught up at block ${block}: ${proofs.provenSamples} sampled blocks proven by receipts (sample rate ${proofs.rate})${proofs.untrusted ? '; the log index is not trusted, every block is proven' : ''}; verified by ${verifiedBy || 'nothing yet'}`,
  )
}

/**
 * Asks every endpoint for its head at once (each endpoint's health and lag
 * come from this). Throws when no endpoint answers.
 */
async function readHeads(s: Syncer): Promise<void> {
  const { rpc } = s.ctx
  // Endpoints resting after a rate limit are skipped, unless all are: then the soonest is waited for.
  const now = Date.now()
  const resting = (e: (typeof rpc.pool.endpoints)[number]) => e.coolUntil > now
  if (rpc.pool.endpoints.every(resting))
    await sleep(Math.min(...rpc.pool.endpoints.map((e) => e.coolUntil - now)), s.ctx.signal)
  const answers = await Promise.allSettled(
    rpc.pool.endpoints.map(async (endpoint) => {
      if (endpoint.coolUntil > Date.now()) throw new IndexerError(`${endpoint.label} is cooling down`)
      // Retried briefly: one fault of a head read would otherwise fail the whole step. The chain
      // id goes in the same batch: a head is heard only from an endpoint that still serves CHAIN_ID.
      const [answer] = await Promise.all([
        rpc.request<Hex>('eth_blockNumber', [], { only: endpoint, retries: 2 }),
        askChainId(s, endpoint),
      ])
      if (endpoint.wrongChainId !== null) return
      const head = BigInt(answer)
      endpoint.observeHead(head)
      if (endpoint.syncing && head >= rpc.pool.head - 1n) {
        // A node that finished syncing is trusted again once it answers eth_syncing with false.
        const syncing = await rpc.request<unknown>('eth_syncing', [], { only: endpoint, retry: false })
        endpoint.syncing = syncing !== false
      }
    }),
  )
  if (!answers.some((a) => a.status === 'fulfilled')) {
    const first = answers.find((a) => a.status === 'rejected')
    throw new IndexerError('No RPC endpoint answered the head', { cause: first?.reason })
  }
  if (rpc.pool.endpoints.every((e) => e.wrongChainId !== null))
    throw new IndexerError(`No RPC endpoint serves chain ${s.options.chainId}`)
}

/**
 * Asks every endpoint for its chain id at once; true when one no longer serves
 * CHAIN_ID. Asked before acting on a reorganisation, which blocks of another
 * chain would fake.
 */
async function chainIdChanged(s: Syncer): Promise<boolean> {
  const serving = s.ctx.rpc.pool.endpoints.filter((e) => e.wrongChainId === null)
  await Promise.all(serving.map((endpoint) => askChainId(s, endpoint)))
  return serving.some((e) => e.wrongChainId !== null)
}

/** Asks an endpoint its chain id; an answer that does not come leaves its standing as it was. */
async function askChainId(s: Syncer, endpoint: Endpoint): Promise<void> {
  const chainId = await s.ctx.rpc
    .request<Hex>('eth_chainId', [], { only: endpoint, retries: 2 })
    .catch(() => null)
  if (chainId !== null) checkChainId(s, endpoint, Number(BigInt(chainId)))
}

/**
 * An endpoint that answers another chain id than CHAIN_ID (a provider that
 * moved the URL to another network, a load balancer routing to the wrong
 * nodes) would mix two chains: its blocks would look like a reorganisation
 * and roll the index back onto them. It gets no request and its head is not
 * heard until it answers CHAIN_ID again (docs/indexer.md, "Providers").
 */
function checkChainId(s: Syncer, endpoint: Endpoint, chainId: number) {
  const expected = s.options.chainId
  if (chainId !== expected && endpoint.wrongChainId === null) {
    s.ctx.logger.error(
      { endpoint: endpoint.index + 1, chainId, expected },
      `${endpoint.label} now serves chain ${chainId}, not ${expected}: no request goes to it until it serves ${expected} again`,
    )
    endpoint.reportedHead = -1n
  } else if (chainId === expected && endpoint.wrongChainId !== null) {
    s.ctx.logger.info({ endpoint: endpoint.index + 1 }, `${endpoint.label} serves chain ${expected} again`)
  }
  endpoint.wrongChainId = chainId === expected ? null : chainId
}

/**
 * The best head reported that a node serves a block at (docs/indexer.md,
 * "Sync"). A number is only a claim: a backend of another network behind a
 * provider's load balancer, or a broken cache, answers one no node has.
 * Claims above the head taken so far are tried from the highest down, each
 * by reading its block from the endpoint that reported it (`known`: a block
 * already read at that height, nothing to ask). A claim without a block is
 * not taken; the claimant's latest block is, being one it serves. Endpoints
 * take their reported heads only up to the served one.
 */
async function servedHead(s: Syncer, known: RpcBlock | null): Promise<bigint> {
  const { pool } = s.ctx.rpc
  const usable = pool.endpoints.filter((e) => e.wrongChainId === null)
  const trusted = usable.filter((e) => !e.syncing)
  // Only syncing endpoints: their heads are all there is (status shows them as syncing).
  const claimants = (trusted.length > 0 ? trusted : usable).filter((e) => e.reportedHead > pool.head)
  let served = pool.head
  for (const claimant of claimants.sort((a, b) => (a.reportedHead > b.reportedHead ? -1 : 1))) {
    const claim = claimant.reportedHead
    if (claim <= served) break
    if (known?.number === claim || (await blockOf(s, claimant, claim))?.number === claim) {
      served = claim
      break
    }
    const latest = await blockOf(s, claimant, 'latest')
    if (latest && latest.number > served && latest.number < claim) served = latest.number
    // A few blocks ahead of what it serves is lag behind a load balancer, gone by the next
    // poll. Further, the endpoint counts as failing until its head is served (logged once).
    const far = claim - served > FAR_AHEAD
    if (far && claimant.headUnserved) continue
    if (far) claimant.headUnserved = true
    s.ctx.logger[far ? 'warn' : 'debug'](
      { endpoint: claimant.index + 1, claimed: claim.toString(), served: served.toString() },
      `${claimant.label} reports head ${claim} but serves no block there: not taken as the head`,
    )
  }
  for (const e of pool.endpoints) {
    e.takeServedHead(served)
    if (e.reportedHead <= served) e.headUnserved = false
  }
  return served
}

/** Blocks between a claimed head and the best one served beyond which the claim is not lag. */
const FAR_AHEAD = 64n

/** The block `endpoint` serves at `block`; null when it has none or does not answer (the next poll asks again). */
const blockOf = (s: Syncer, endpoint: Endpoint, block: bigint | 'latest') =>
  s.ctx.rpc.getBlock(block, { only: endpoint, retries: 2 }).catch(() => null)

/**
 * The stored tip is above every endpoint's head. That is lag unless block
 * hashes prove the chain changed: the block at the reported head (or the
 * highest stored block below it) must differ from the stored one.
 */
async function proveShorterChain(s: Syncer): Promise<void> {
  const endpoint = s.ctx.rpc.pool.latest
  if (!endpoint) return
  const stored = (await storedBlocks(s.ctx.pool)).find((b) => b.number <= endpoint.reportedHead)
  if (!stored) return
  const block = await s.ctx.rpc.getBlock(stored.number, { only: endpoint })
  if (block && block.hash.toLowerCase() !== stored.hash) throw new ReorgDetectedError(stored.number)
}

/** A proven reorganisation may have shortened the chain: heads above what the nodes now report are forgotten. */
function forgetHeadsAboveChain(s: Syncer) {
  const latest = s.ctx.rpc.pool.latest?.reportedHead
  if (latest === undefined || latest >= s.head.lastSeenBlock) return
  s.ctx.rpc.pool.resetHeads(latest)
  const confirmed = latest - s.options.confirmations
  s.head = {
    lastSeenBlock: latest,
    chainConfirmedBlock: minBig(confirmed, s.head.chainConfirmedBlock),
  }
  const { level, note } = reorgLogging(s.options.network)
  s.ctx.logger[level](
    { head: latest.toString() },
    `the chain is shorter than before (head ${latest}): heads above it are forgotten${note}`,
  )
}

/**
 * The stored tip's header and the next block's, asked in the same tick as the
 * head (one JSON-RPC batch per endpoint): following a new block then takes no
 * round trip of its own for its header, nor an idle poll one for the tip's.
 * Not retried: a block that is not there yet (null, or an error from some
 * providers) is the usual answer for the next one, and both are read again
 * the usual way when missing.
 */
async function readNearTip(s: Syncer): Promise<{ tip: RpcBlock | null; next: RpcBlock | null } | null> {
  if (!s.tip?.hash) return null
  const read = (n: bigint) => s.ctx.rpc.getBlock(n, { retry: false }).catch(() => null)
  const [tip, next] = await Promise.all([read(s.tip.number), read(s.tip.number + 1n)])
  return { tip, next }
}

/** While idle, the stored tip must still be on the chain (a same-height reorg changes no block number). */
async function verifyTip(s: Syncer, read: RpcBlock | null = null): Promise<void> {
  if (!s.tip?.hash) return
  const block =
    read?.number === s.tip.number ? read : await s.ctx.rpc.getBlock(s.tip.number, { minBlock: s.tip.number })
  if (!block) {
    // The node does not have the tip: lag, or a chain shorter than before (proven by hashes below).
    await proveShorterChain(s)
    return
  }
  if (block.hash.toLowerCase() !== s.tip.hash) throw new ReorgDetectedError(s.tip.number)
}

export const loadTip = (s: Syncer): Promise<Syncer['tip']> => readTip(s.ctx.pool, s.options.network)

export const loadVerified = (s: Syncer): Promise<bigint | null> =>
  readLastVerifiedBlock(s.ctx.pool, s.options.network)
