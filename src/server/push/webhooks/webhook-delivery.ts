/**
 * Webhook delivery in the web process (docs/push.md, "Webhooks"):
 *  - the dispatcher reads the activity journal per enabled endpoint from the
 *    endpoint's cursor (nextEvents: order, confirmations, reorgs) and, in one
 *    transaction under the endpoint's row lock (FOR UPDATE SKIP LOCKED, so
 *    several web processes share the work), records a delivery per event,
 *    queues its job in pg-boss and advances the cursor;
 *  - the attempt loop runs the jobs: one attempt each (send.ts), signed with
 *    the endpoint's secret (Standard Webhooks), up to `concurrency` at once,
 *    each job completed as its attempt ends; a failed attempt queues the next
 *    one by the retry schedule (schedule.ts) in the transaction that records
 *    it, and a failure run longer than `disableAfterMs` disables the endpoint;
 *  - fairness (docs/push.md, "Fair delivery"): a job's priority is its
 *    endpoint's backlog when it is queued (pg-boss fetches higher priorities
 *    first), so an endpoint's new event is not queued behind another endpoint's
 *    backlog; and an endpoint has at most 20 attempts in flight in a process
 *    (endpoint-slots.ts), so a receiver that hangs cannot take every slot.
 * `wake()` runs the dispatcher at once (new journal entries, a head that
 * moved); without it, it polls every `pollMs`.
 */
import { randomUUID } from 'node:crypto'
import PgBoss from 'pg-boss'
import { Webhook } from 'standardwebhooks'
import type { Logger } from '@/config/logger'
import { journalBounds, readJournal } from '@/db/queries/activity-journal'
import type { ReadDb } from '@/db/queries/sql'
import {
  claimUnqueued,
  currentSchema,
  type DeliveryTarget,
  endpointsToDispatch,
  findDeliveryTarget,
  hasUnqueued,
  inWebhookTransaction,
  lockEndpointForDispatch,
  pruneDeliveries,
  recordDelivered,
  recordFailedAttempt,
  recordSkipped,
  selectHead,
  type WebhookTx,
} from '@/db/queries/webhooks'
import { openSecret, type WebhookSettings } from '@/server/credentials/webhook-secrets'
import type { WebMetrics } from '@/server/metrics/web-metrics'
import { toPushEvent } from '@/server/push/activity-event'
import { nextEvents } from '@/server/push/journal-cursor'
import { databaseSource } from '@/server/push/journal-tail'
import {
  type AttemptOutcome,
  type EndpointJob,
  type EndpointSlotOptions,
  EndpointSlots,
} from './endpoint-slots'
import { DEFAULT_RETRY_SCHEDULE, type RetrySchedule, retryDelayMs } from './schedule'
import { type AttemptResult, sendWebhook } from './send'

export const DELIVERY_QUEUE = 'webhook-delivery'
/**
 * pg-boss's dead-letter queue of DELIVERY_QUEUE: a job whose runs all failed (its process
 * died, or its outcome could not be recorded, three times) lands here and is queued again,
 * so that no delivery stays pending with nothing to run it (docs/push.md, "At least once").
 */
export const STRANDED_QUEUE = 'webhook-delivery-stranded'

export interface WebhookDeliveryOptions {
  db: ReadDb
  /** pg-boss's own connections (a small pool of its own). */
  connectionString: string
  /** pg-boss's schema; default `pgboss`, or `<schema>_pgboss` when the database's schema is not `public`. */
  schema?: string
  network: string
  settings: WebhookSettings
  logger: Logger
  retry?: RetrySchedule
  /** A failure run (every attempt failing) this long disables the endpoint; default 24 h. */
  disableAfterMs?: number
  /** One attempt's deadline; default 10 s. */
  timeoutMs?: number
  maxResponseBytes?: number
  /** Dispatcher's fallback poll; default 1 s. */
  pollMs?: number
  /** How often the attempt loop looks for due jobs when it has found none (seconds); default 0.5. */
  jobPollSeconds?: number
  /** Attempts in flight at once in this process; default 200. */
  concurrency?: number
  /** Attempts at once per endpoint in this process, and the jobs held and parked for them (endpoint-slots.ts). */
  endpointSlots?: Partial<EndpointSlotOptions>
  /** The wait before a stranded job (pg-boss's retries of it spent) is queued again; default 60 s. */
  strandedRetrySeconds?: number
  /** Deliveries kept in the log; default 7 days. */
  logRetentionMs?: number
  /** The process's metrics (METRICS_PORT), if any. */
  metrics?: Pick<WebMetrics, 'webhookAttempt' | 'webhookEndpointDisabled' | 'webhookSlots'> | undefined
}

/**
 * An endpoint's limits in a process (docs/push.md, "Fair delivery"); the endpoints not proven
 * share half the concurrency, and those of them that fail half of that.
 */
const ENDPOINT_SLOTS: Omit<EndpointSlotOptions, 'unprovenShare' | 'failingShare'> = {
  perEndpoint: 20,
  perUnprovenEndpoint: 2,
  rememberMs: 3_600_000,
  maxRemembered: 10_000,
  holdPerEndpoint: 100,
  maxHeld: 2_000,
  maxHoldMs: 30_000,
  pullableMs: 45_000,
  maxParked: 20_000,
}

/** How long a parked job waits in the queue when no process pulls it forward (s). */
const PARK_SECONDS = 60

interface DeliveryJob {
  deliveryId: string
  /** Its endpoint, for the endpoint's attempt slots (absent from jobs queued by versions before them: those run unlimited). */
  endpointId?: string
  /** The attempt this job makes (1-based): a job whose attempt was recorded already does nothing. */
  attempt: number
}

/** A job as the attempt loop keeps it: fetched, or a copy it queued. */
type QueuedJob = Pick<PgBoss.JobWithMetadata<DeliveryJob>, 'id' | 'data' | 'priority'>

const DAY_MS = 24 * 60 * 60 * 1000

/** Attempts in flight at once in a process. */
const DEFAULT_CONCURRENCY = 200

export class WebhookDelivery {
  private boss: PgBoss | undefined
  private readonly retry: RetrySchedule
  private readonly disableAfterMs: number
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private stopped = false
  private readonly stopping = new AbortController()
  /** The attempt loop, and the attempts it runs (each settles its job). */
  private attempts: Promise<void> | undefined
  private readonly inFlight = new Set<Promise<void>>()
  /** Each endpoint's attempt slots, and the jobs held and parked for them. */
  private readonly slots: EndpointSlots<QueuedJob>
  /** Ends the attempt loop's wait (wakeAttemptLoop); a wake while it is not waiting is kept. */
  private attemptWake: (() => void) | undefined
  private wakeAttempts = false
  private lastPrune = 0
  /** The pass in progress: passes run one at a time, whoever starts them (timer or caller). */
  private lastPass: Promise<void> = Promise.resolve()

  constructor(private readonly options: WebhookDeliveryOptions) {
    this.retry = options.retry ?? DEFAULT_RETRY_SCHEDULE
    this.disableAfterMs = options.disableAfterMs ?? DAY_MS
    const unprovenShare = Math.max(1, Math.floor((options.concurrency ?? DEFAULT_CONCURRENCY) / 2))
    const failingShare = Math.max(1, Math.floor(unprovenShare / 2))
    this.slots = new EndpointSlots(
      { ...ENDPOINT_SLOTS, unprovenShare, failingShare, ...options.endpointSlots },
      (job, release) => this.run(job, release),
    )
  }

  async start(): Promise<void> {
    const { options } = this
    const current = await currentSchema(options.db)
    const boss = new PgBoss({
      connectionString: options.connectionString,
      schema: options.schema ?? (current === 'public' ? 'pgboss' : `${current}_pgboss`),
      max: 4,
      application_name: 'nft-web-webhooks',
      // Our retries are jobs of their own (schedule.ts); pg-boss retries only a job whose
      // process died mid-attempt (expired), which then records that attempt as usual.
      retryLimit: 2,
      retryDelay: 5,
      expireInSeconds: Math.ceil((options.timeoutMs ?? 10_000) / 1000) + 60,
      retentionDays: 3,
      deleteAfterDays: 1,
      archiveCompletedAfterSeconds: 3600,
      schedule: false,
    })
    boss.on('error', (err) => options.logger.warn({ err }, 'webhook job queue error'))
    this.boss = boss
    await boss.start()
    for (const queue of [STRANDED_QUEUE, DELIVERY_QUEUE])
      await boss.createQueue(queue).catch(async (err) => {
        // Another web process created it first.
        if (!(await boss.getQueue(queue))) throw err
      })
    await boss.work<DeliveryJob>(STRANDED_QUEUE, async ([job]) => {
      options.logger.warn({ deliveryId: job!.data.deliveryId }, 'webhook job failed every run: queued again')
      await this.boss!.send(DELIVERY_QUEUE, job!.data, {
        deadLetter: STRANDED_QUEUE,
        startAfter: options.strandedRetrySeconds ?? 60,
      })
    })
    options.metrics?.webhookSlots(() => this.slots)
    this.attempts = this.runAttempts()
    this.schedule(0)
  }

  /**
   * The attempt loop: fetches due jobs (highest priority first) while fewer than `concurrency`
   * attempts are in flight, and completes or fails each job as its own attempt ends, so a slow
   * receiver holds its own attempts only, never a batch of others' (docs/push.md, "Fair delivery").
   * A job whose endpoint has no slot free is held for the next one, or parked in the queue until
   * the endpoint's hold runs low (endpoint-slots.ts).
   * A job fails only once its attempt has ended: pg-boss never starts it again while it still sends.
   */
  private async runAttempts(): Promise<void> {
    const boss = this.boss!
    const concurrency = this.options.concurrency ?? DEFAULT_CONCURRENCY
    const pollMs = (this.options.jobPollSeconds ?? 0.5) * 1000
    while (!this.stopped) {
      const room = concurrency - this.inFlight.size
      let jobs: QueuedJob[] = []
      if (room > 0) {
        // pg-boss answers no jobs when its query fails (the database is down): the loop polls on.
        jobs = await boss
          .fetch<DeliveryJob>(DELIVERY_QUEUE, { batchSize: Math.min(room, 100), includeMetadata: true })
          .catch((err: unknown) => {
            this.options.logger.warn({ err }, 'webhook jobs could not be fetched')
            return []
          })
      }
      const { park, pull } = this.slots.sweep()
      for (const job of jobs) {
        const endpointId = job.data.endpointId
        if (endpointId === undefined) this.run(job)
        // A job after the first attempt is a retry: its endpoint failed the last time it was tried.
        else if (this.slots.place(endpointId, job, job.data.attempt > 1) === 'park')
          park.push({ endpointId, job })
      }
      if (park.length > 0 || pull.length > 0) await this.requeue(park, pull)
      // A full fetch: more may be due at once; jobs pulled forward are due now; else wait for a
      // slot, a wake-up or the poll.
      if ((jobs.length > 0 && jobs.length === Math.min(room, 100)) || pull.length > 0) continue
      if (this.wakeAttempts) {
        this.wakeAttempts = false
        continue
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs)
        function done() {
          clearTimeout(timer)
          resolve()
        }
        this.attemptWake = done
      })
      this.attemptWake = undefined
      this.wakeAttempts = false
    }
  }

  /** Makes the attempt loop look for jobs now (a slot freed, jobs were queued, the process stops). */
  private wakeAttemptLoop() {
    if (this.attemptWake) this.attemptWake()
    else this.wakeAttempts = true
  }

  /**
   * Moves jobs in the queue, in one transaction (endpoint-slots.ts): each is replaced by a copy
   * (its data and priority, a new id), due in PARK_SECONDS for the jobs to park and at once for
   * the parked ones pulled forward. A move is not an attempt: nothing is recorded.
   */
  private async requeue(park: EndpointJob<QueuedJob>[], pull: EndpointJob<QueuedJob>[]) {
    const copy = ({ endpointId, job }: EndpointJob<QueuedJob>, startAfter?: string) => ({
      endpointId,
      job: { id: randomUUID(), data: job.data, priority: job.priority },
      startAfter,
    })
    const moves = [...park.map((p) => copy(p, `${PARK_SECONDS} seconds`)), ...pull.map((p) => copy(p))]
    const boss = this.boss!
    try {
      await inWebhookTransaction(this.options.db, async (tx) => {
        await boss.insert(
          moves.map(({ job, startAfter }) => ({
            name: DELIVERY_QUEUE,
            id: job.id,
            data: job.data,
            priority: job.priority,
            startAfter,
            deadLetter: STRANDED_QUEUE,
          })),
          { db: tx.jobs },
        )
        await boss.deleteJob(
          DELIVERY_QUEUE,
          [...park, ...pull].map(({ job }) => job.id),
          { db: tx.jobs },
        )
      })
    } catch (err) {
      // Not moved: fetched jobs expire and pg-boss runs them again; parked ones come back on their own.
      this.options.logger.warn({ err, jobs: moves.length }, 'webhook jobs could not be moved in the queue')
      return
    }
    for (const { endpointId, job, startAfter } of moves) if (startAfter) this.slots.parked(endpointId, job)
  }

  /** Runs one job's attempt and settles the job with pg-boss when the attempt has ended; then frees its endpoint's slot with the outcome. */
  private run(job: QueuedJob, releaseSlot?: (outcome: AttemptOutcome) => void) {
    const boss = this.boss!
    let outcome: AttemptOutcome
    const settled = this.attempt(job.data)
      .then(
        (ended) => {
          outcome = ended
          return boss.complete(DELIVERY_QUEUE, job.id)
        },
        (err: unknown) =>
          boss.fail(DELIVERY_QUEUE, job.id, { message: err instanceof Error ? err.message : String(err) }),
      )
      .catch((err: unknown) =>
        // Not settled: pg-boss expires the job and runs it again (an attempt is recorded once).
        this.options.logger.warn(
          { err, deliveryId: job.data.deliveryId },
          'webhook job could not be settled',
        ),
      )
      .finally(() => {
        releaseSlot?.(outcome)
        this.inFlight.delete(settled)
        this.wakeAttemptLoop()
      })
    this.inFlight.add(settled)
  }

  /** Run the dispatcher now (new journal entries, a head that moved, a redelivery). */
  wake(): void {
    if (this.stopped) return
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    // Held and parked jobs are taken out first (an attempt cut below would start the next one),
    // and go back to the queue due at once, for the next process.
    const waiting = this.slots.takeAll()
    // Attempts in flight are cut (a receiver that does not answer would hold the stop for the
    // whole send timeout, past the process's own deadline): deliveries are at least once.
    this.stopping.abort()
    this.wakeAttemptLoop()
    await this.running?.catch(() => undefined)
    await this.attempts
    waiting.push(...this.slots.takeAll())
    if (waiting.length > 0) await this.requeue([], waiting)
    // The cut attempts fail their jobs (run again after a restart) before pg-boss stops; not
    // for longer than 5 s (a database that hangs): a job left unsettled expires and runs again.
    await Promise.race([Promise.all(this.inFlight), new Promise((r) => setTimeout(r, 5_000).unref())])
    await this.boss?.stop({ graceful: true, wait: true, timeout: 5_000 })
  }

  private schedule(ms: number) {
    if (this.running) {
      this.again = true
      return
    }
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.running = this.dispatch()
        .catch((err) => this.options.logger.warn({ err }, 'webhook dispatch failed'))
        .finally(() => {
          this.running = undefined
          if (this.stopped) return
          const soon = this.again
          this.again = false
          this.schedule(soon ? 0 : (this.options.pollMs ?? 1000))
        })
    }, ms)
    this.timer.unref?.()
  }

  /** One pass, after the one in progress: every endpoint that is behind, then the redeliveries, then (hourly) the log's pruning. */
  dispatch(): Promise<void> {
    const pass = this.lastPass.catch(() => undefined).then(() => this.dispatchPass())
    this.lastPass = pass
    return pass
  }

  private async dispatchPass(): Promise<void> {
    const { db } = this.options
    let queued = 0
    const ids = await endpointsToDispatch(db)
    if (ids.length > 0) {
      const head = await selectHead(db, this.options.network)
      if (head !== null) for (const id of ids) queued += await this.dispatchEndpoint(id, head)
    }
    if (await hasUnqueued(db)) {
      queued += await inWebhookTransaction(db, async (tx) => {
        const claimed = await claimUnqueued(tx, 100)
        for (const { deliveryId, endpointId } of claimed) await this.enqueue(tx, endpointId, deliveryId, 1)
        return claimed.length
      })
    }
    // Committed: the attempt loop takes them now rather than at its next poll.
    if (queued > 0) this.wakeAttemptLoop()
    if (Date.now() - this.lastPrune > 3_600_000) {
      this.lastPrune = Date.now()
      await pruneDeliveries(db, this.options.logRetentionMs ?? 7 * DAY_MS)
    }
  }

  /** Queues the endpoint's new events, in transactions of up to 200; how many it queued. */
  private async dispatchEndpoint(id: bigint, head: bigint): Promise<number> {
    let queued = 0
    for (;;) {
      const more = await inWebhookTransaction(this.options.db, async (tx) => {
        const endpoint = await lockEndpointForDispatch(tx, id)
        if (!endpoint) return false
        // One filter for what is sent and what is passed over: ERC-721 unless a standard is named.
        const filter = {
          collection: endpoint.collection ?? undefined,
          eventType: endpoint.event_type ?? undefined,
          standard: endpoint.standard ?? 'ERC721',
          minConfirmations: endpoint.min_confirmations,
        }
        const next = await nextEvents(databaseSource(tx.reads), head, BigInt(endpoint.cursor), filter, 200)
        let backlog = next.entries.length > 0 ? await tx.openDeliveries(id) : 0
        for (const entry of next.entries) {
          const event = toPushEvent(entry, this.options.network, head, endpoint.standard !== null)
          const deliveryId = await tx.insertDelivery(id, {
            id: event.id,
            type: event.type,
            payload: JSON.stringify(event),
          })
          await this.enqueue(tx, id, deliveryId, 1, { backlog: backlog++ })
        }
        let cursor = next.cursor
        if (!next.waiting) {
          // Every endpoint filters (by standard at least): entries past the last match are passed
          // over too, so that the endpoint is not read again until something new is journaled
          // (seq order is commit order).
          const { newest } = await journalBounds(tx.reads)
          if (newest > cursor) {
            const rest = await readJournal(tx.reads, {
              after: cursor,
              limit: 1,
              collection: filter.collection,
              eventType: filter.eventType,
              standard: filter.standard,
              through: newest,
            })
            if (rest.length === 0) cursor = newest
          }
        }
        if (cursor !== BigInt(endpoint.cursor)) await tx.setCursor(id, cursor)
        queued += next.entries.length
        return !next.waiting && next.entries.length > 0
      })
      if (!more) return queued
    }
  }

  /**
   * Queues a delivery's attempt. `backlog`: the endpoint's open deliveries ahead of it; the
   * job's priority is its negative, so pg-boss fetches it before the jobs deeper in other
   * endpoints' backlogs (a redelivery, asked for by a person, has none). `startAfterSeconds`:
   * from the database's now (pg-boss adds it there), not this process's clock.
   */
  private async enqueue(
    tx: WebhookTx,
    endpointId: bigint,
    deliveryId: bigint,
    attempt: number,
    options: { backlog?: number; startAfterSeconds?: number } = {},
  ) {
    if (!this.boss) throw new Error('webhook delivery is not started')
    await this.boss.send(
      DELIVERY_QUEUE,
      { deliveryId: deliveryId.toString(), endpointId: endpointId.toString(), attempt } satisfies DeliveryJob,
      {
        db: tx.jobs,
        deadLetter: STRANDED_QUEUE,
        priority: -(options.backlog ?? 0),
        ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
      },
    )
  }

  /** Signs and sends one attempt. */
  private async send(target: DeliveryTarget): Promise<AttemptResult> {
    let secret: string
    try {
      secret = openSecret(this.options.settings.sealKey, BigInt(target.endpoint_id), target.secret_ciphertext)
    } catch {
      return { ok: false, statusCode: null, error: UNREADABLE_SECRET, durationMs: 0 }
    }
    const timestamp = new Date()
    const signature = new Webhook(secret).sign(target.event_id, timestamp, target.payload)
    return sendWebhook(
      target.url,
      target.payload,
      {
        'webhook-id': target.event_id,
        'webhook-timestamp': Math.floor(timestamp.getTime() / 1000).toString(),
        'webhook-signature': signature,
      },
      {
        timeoutMs: this.options.timeoutMs ?? 10_000,
        maxResponseBytes: this.options.maxResponseBytes ?? 64 * 1024,
        allowHosts: this.options.settings.allowHosts,
        signal: this.stopping.signal,
      },
    )
  }

  /** One attempt of one delivery; how it ended (nothing sent: undefined). */
  private async attempt(job: DeliveryJob): Promise<AttemptOutcome> {
    const { db, logger } = this.options
    const deliveryId = BigInt(job.deliveryId)
    const target = await findDeliveryTarget(db, deliveryId)
    // Gone (its endpoint deleted), finished, or this attempt already recorded (a job run twice).
    if (!target || target.status === 'delivered' || target.status === 'failed' || target.status === 'skipped')
      return
    if (target.attempts >= job.attempt) return
    if (!target.enabled || !target.key_active) {
      await recordSkipped(
        db,
        deliveryId,
        target.enabled ? 'The API key is revoked.' : 'The endpoint is disabled.',
      )
      return
    }
    const result = await this.send(target)
    // Not recorded: the job fails, and pg-boss runs it again (after a restart) as a whole attempt.
    if (result.stopped) throw new Error('Webhook delivery stopped during the attempt; it is made again')
    this.options.metrics?.webhookAttempt(result.ok)
    if (result.ok) {
      await recordDelivered(db, deliveryId, {
        number: job.attempt,
        statusCode: result.statusCode!,
        durationMs: result.durationMs,
      })
      return 'delivered'
    }
    const delay = retryDelayMs(this.retry, job.attempt)
    const { disabled } = await inWebhookTransaction(db, async (tx) => {
      const outcome = await recordFailedAttempt(tx, deliveryId, {
        number: job.attempt,
        statusCode: result.statusCode,
        error: result.error ?? 'failed',
        durationMs: result.durationMs,
        retryInMs: delay,
        disableAfterMs: this.disableAfterMs,
        reason: `Every delivery failed for ${formatSpan(this.disableAfterMs)} (last: ${result.error ?? 'failed'}).`,
      })
      // Only the run that recorded the attempt schedules the next one (a job run twice records once).
      if (outcome.recorded && delay !== null) {
        const backlog = await tx.openDeliveries(BigInt(target.endpoint_id))
        await this.enqueue(tx, BigInt(target.endpoint_id), deliveryId, job.attempt + 1, {
          backlog,
          startAfterSeconds: delay / 1000,
        })
      }
      return outcome
    })
    logger.debug(
      {
        deliveryId: target.delivery_id,
        endpointId: target.endpoint_id,
        status: result.statusCode,
        error: result.error,
      },
      'webhook attempt failed',
    )
    if (disabled)
      logger.info({ endpointId: target.endpoint_id }, 'webhook endpoint disabled after its failure run')
    return 'failed'
  }
}

/** A secret that no longer opens (AUTH_SECRET changed): a failed attempt that says what to do. */
const UNREADABLE_SECRET =
  'The signing secret cannot be read (the server secret changed); rotate the secret in the portal.'

function formatSpan(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hours`
  if (ms % 60_000 === 0) return `${ms / 60_000} minutes`
  if (ms % 1000 === 0) return `${ms / 1000} seconds`
  return `${ms} ms`
}
