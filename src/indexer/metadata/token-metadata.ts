/**
 * The token metadata queue (docs/metadata.md): jobs (token-job.ts), their
 * outcomes (token-outcomes.ts) and the pipeline the indexer runs
 * (token-pipeline.ts). Here: one round driven step by step.
 */
import type { FetchLimits } from './document'
import { HostScheduler } from './host-scheduler'
import {
  dueTokens,
  processToken,
  readUris,
  type TokenJob,
  type TokenJobDeps,
  type TokenResult,
} from './token-job'
import { writeOutcomes } from './token-outcomes'

export type { TokenJobDeps }

/**
 * One round of the token queue: tokenURI for a batch (batched calls), then
 * each document and image, then the outcomes in one statement. Used where the
 * queue is driven step by step (tests, fixtures); the indexer runs
 * TokenPipeline, which never waits for a whole batch.
 */
export async function processTokens(deps: TokenJobDeps, batchSize = 50): Promise<number> {
  const jobs = await dueTokens(deps.pool, batchSize)
  if (jobs.length === 0) return 0
  const uris = await readUris(deps, jobs)
  const limits: FetchLimits = {
    ...deps.limits,
    scheduler:
      deps.limits.scheduler ??
      new HostScheduler({
        concurrency: deps.concurrency,
        // One batch at a time: everything read waits its turn (nothing is deferred as busy).
        host: { concurrency: deps.concurrency, maxQueued: Infinity, maxQueuedPerGroup: Infinity },
        gateway: { concurrency: deps.concurrency, maxQueued: Infinity, maxQueuedPerGroup: Infinity },
      }),
  }
  const results = await Promise.all(
    jobs.map(
      async (job, i): Promise<[TokenJob, TokenResult]> => [
        job,
        await processToken(deps, limits, job, uris[i]!),
      ],
    ),
  )
  await writeOutcomes(deps.pool, deps.logger, results)
  return jobs.length
}
