/**
 * GET /v1/activity/stream (docs/push.md, "Live stream"; docs/api.md): the
 * activity feed as Server-Sent Events. Served by plain node:http like the
 * media path (trpc-to-openapi only answers JSON), after the same access
 * control as /v1/activity — the client IP's limit, the credential, its
 * limit, scope `read:activity` and origin (handler.ts runs those) — then:
 *  - parameters: `collection`, `event_type`, `min_confirmations` (0..64),
 *    `since`; the `Last-Event-ID` header wins over `since` (a browser's
 *    EventSource sends it on every reconnect to the URL it was given);
 *  - the resume point: a positive integer at most the newest event id
 *    (400 otherwise); older than the events kept → 410 RESUME_POINT_EXPIRED
 *    naming the oldest id; none → only new events;
 *  - a stream slot of the credential (STREAMS_PER_KEY, STREAMS_PER_DEMO_TOKEN)
 *    and one of the client address (RATE_LIMIT_IP_KEY's `concurrent`), in the
 *    shared limiter store, so across web processes → 429 beyond;
 *  - every failure up to here is an error envelope; afterwards the stream
 *    ends (never an error frame) when the credential is refused at a
 *    re-check (revoked, rotated out, expired), a slot is lost, the client
 *    leaves its events unread for `stallMs`, or the process stops.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import { JOURNAL_RETENTION_MS } from '@/db/queries/activity-journal'
import { journalResumeBounds } from '@/db/queries/journal-resume'
import { address, integerParam, standardParam, transferEventType } from '@/lib/schemas'
import { queryInput } from '@/server/api/internals/routes'
import { permissionRefusal, type RequestAccess } from '@/server/credentials/access'
import { parseAuthorization } from '@/server/credentials/secrets'
import type { VerifiedCredential } from '@/server/credentials/verifier'
import { ApiError } from '@/server/errors/api-error'
import { ActivityStream } from '@/server/push/activity-stream'
import { createJournalListener, type JournalListener } from '@/server/push/journal-listener'
import { JournalTail } from '@/server/push/journal-tail'
import { rateLimitedError } from '@/server/ratelimit/errors'
import { STREAMS_PER_DEMO_TOKEN, STREAMS_PER_KEY } from '@/server/ratelimit/policy'
import type { Services } from '@/server/services/web-services'

export const STREAM_PATH = '/v1/activity/stream'
/** The scope a stream needs, as `/v1/activity`. */
export const STREAM_SCOPE = 'read:activity'

/** Whether a request path (no query) addresses the stream (a trailing slash tolerated). */
export function isStreamPath(pathname: string): boolean {
  const path = pathname.toLowerCase()
  return path === STREAM_PATH || path === `${STREAM_PATH}/`
}

export const MAX_MIN_CONFIRMATIONS = 64
/** Sent once as `retry:`: how long a browser's EventSource waits before it reconnects. */
export const STREAM_RETRY_MS = 3000
export const HEARTBEAT_MS = 15_000
/** Between re-checks of the credential: the verifier's cache bound keeps revocation within ~2 s. */
export const RECHECK_MS = 1000

const eventId = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, 'must be a positive integer (an event id)')
  .refine(
    (v) => !/^[0-9]+$/.test(v) || BigInt(v) <= 9223372036854775807n,
    'must be a positive integer (an event id)',
  )

export const streamInput = z.strictObject({
  collection: address.describe('Only events of this contract (lowercase address).').optional(),
  event_type: transferEventType.describe('Only events of this type: mint, transfer or burn.').optional(),
  min_confirmations: integerParam(0, MAX_MIN_CONFIRMATIONS, 0)
    .describe(
      `Blocks on top of an addition's block before it is sent, 0 to ${MAX_MIN_CONFIRMATIONS}; default 0 (at once).`,
    )
    .optional(),
  since: eventId
    .describe('Resume after this event id (the `Last-Event-ID` header wins when both are sent).')
    .optional(),
  standard: standardParam,
})

export interface StreamOptions {
  /** Between heartbeat comments (ms); default 15 s. */
  heartbeatMs?: number
  /** Between credential re-checks (ms); default 1 s. */
  recheckMs?: number
  /** The journal listener's fallback poll (ms); default 5 s. */
  pollMs?: number
  /** How long a client may leave its events unread before its stream is cut (ms); default 60 s. */
  stallMs?: number
  /**
   * The process's journal listener, when something else (webhook delivery) shares it;
   * its owner closes it. Default: one made at the first stream, closed by close().
   */
  listener?: JournalListener
}

export interface StreamRequest {
  requestId: string
  credential: VerifiedCredential
  access: RequestAccess
  /** Headers every response carries (CORS, RateLimit). */
  headers: Record<string, string>
  query: string
}

export interface StreamHandler {
  /** Validates, then starts the stream; throws an ApiError (the caller answers the envelope) before the first byte. */
  (req: IncomingMessage, res: ServerResponse, request: StreamRequest): Promise<void>
  /** Ends every open stream and the journal listener (the process stops). */
  close(): Promise<void>
}

export function createStreamHandler(services: Services, options: StreamOptions = {}): StreamHandler {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
  const recheckMs = options.recheckMs ?? RECHECK_MS
  const limiter = services.access.limiter
  const leaseMs = limiter.leaseMs
  let listener: JournalListener | undefined = options.listener
  let tail: JournalTail | undefined
  const open = new Set<() => void>()
  let tokens = 0

  const handle = async (req: IncomingMessage, res: ServerResponse, request: StreamRequest) => {
    const { credential } = request
    const input = streamInput.parse(queryInput(request.query))
    // An empty Last-Event-ID (a client that has received no event yet) is no resume point.
    const raw = req.headers['last-event-id']
    const header = raw === undefined || raw === '' ? undefined : raw
    let resume: string | undefined = input.since
    if (header !== undefined) {
      const parsed = eventId.safeParse(Array.isArray(header) ? header.join(',') : header.trim())
      if (!parsed.success) {
        throw new ApiError('INVALID_ARGUMENT', 'Last-Event-ID: must be a positive integer (an event id)')
      }
      resume = parsed.data
    }
    const what = header !== undefined ? 'Last-Event-ID' : 'since'
    const bounds = await journalResumeBounds(services.db)
    let after = bounds.newest
    if (resume !== undefined) {
      after = BigInt(resume)
      if (after > bounds.newest) {
        throw new ApiError(
          'INVALID_ARGUMENT',
          `${what}: ${after} is above the newest event id (${bounds.newest}); it is not an id of this service.`,
        )
      }
      const oldest = bounds.oldest ?? bounds.newest + 1n
      if (after < oldest - 1n) {
        const hours = JOURNAL_RETENTION_MS / 3_600_000
        throw new ApiError(
          'RESUME_POINT_EXPIRED',
          bounds.oldest === null
            ? `${what}: events after ${after} are no longer kept (${hours} h) and none is kept now; reconnect without a resume point for new events.`
            : `${what}: events after ${after} are no longer kept (${hours} h); the oldest available event id is ${bounds.oldest}. Resume from ${bounds.oldest - 1n} or later, or reconnect without a resume point for new events only.`,
        )
      }
    }

    // The stream's slots, in the shared limiter store, renewed while the stream lives: the
    // credential's, then its client address's (many keys from one address are bounded too).
    const key = credential.kind === 'key'
    const token = `stream.${process.pid}.${++tokens}.${request.requestId}`
    const slots = [
      {
        policy: limiter.policies[key ? 'streamKey' : 'streamDemo'],
        subject: credential.subject,
        who: key ? 'this API key' : 'this demo token',
        refusal: `At most ${key ? STREAMS_PER_KEY : STREAMS_PER_DEMO_TOKEN} live streams per ${key ? 'API key' : 'demo token'} are open at once; close one first. Retry after 1 s.`,
      },
      {
        policy: limiter.policies.streamIp,
        subject: request.access.ipSubject,
        who: 'this client address',
        refusal: `At most ${limiter.policies.streamIp.concurrent} live streams per client address are open at once; close one first. Retry after 1 s.`,
      },
    ]
    const releaseSlots = (held: typeof slots) => {
      for (const slot of held) void limiter.store.release(slot.policy, slot.subject, token)
    }
    for (const [i, slot] of slots.entries()) {
      // Refused, or the limiter store failing: the slots already held are given back at once.
      const decision = await limiter.store.acquire(slot.policy, slot.subject, token, leaseMs).catch((err) => {
        releaseSlots(slots.slice(0, i))
        throw err
      })
      if (!decision.allowed) {
        releaseSlots(slots.slice(0, i))
        const error = rateLimitedError(decision, slot.who, request.headers)
        throw new ApiError('RATE_LIMITED', slot.refusal, { headers: error.headers })
      }
    }
    if (res.destroyed) return releaseSlots(slots)

    listener ??= createJournalListener(services.db, {
      network: services.config.NETWORK,
      logger: services.logger,
      pollMs: options.pollMs,
    })
    res.writeHead(200, {
      ...request.headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'X-Accel-Buffering': 'no',
      'X-Request-Id': request.requestId,
    })
    req.socket.setNoDelay(true)
    res.write(`retry: ${STREAM_RETRY_MS}\n\n`)
    // The request's own concurrency slots were for its admission: the stream holds its stream slot instead.
    request.access.release()

    tail ??= new JournalTail(services.db, services.config.NETWORK)
    const stream = new ActivityStream(res, {
      tail,
      listener,
      network: services.config.NETWORK,
      filter: {
        collection: input.collection,
        eventType: input.event_type,
        standard: input.standard,
        minConfirmations: (input.min_confirmations as number | undefined) ?? 0,
      },
      after,
      heartbeatMs,
      stallMs: options.stallMs,
      // Frames left unread: the connection is cut (the client resumes from its Last-Event-ID).
      onStalled: () => {
        end()
        res.destroy()
      },
      logger: services.logger,
    })

    const presented = parseAuthorization(req.headers.authorization)
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      open.delete(end)
      clearInterval(recheck)
      clearInterval(renew)
      stream.close()
      releaseSlots(slots)
      if (!res.writableEnded) res.end()
    }
    open.add(end)
    res.once('close', end)
    // Revoked, rotated out, expired, or its scope or this origin taken off the key: the stream
    // ends within the verifier's cache bound, as a request would be refused.
    const recheck = setInterval(() => {
      if (presented.kind !== 'key' && presented.kind !== 'demo') return end()
      services.access.verifier.verify(presented).then(
        (still) => {
          if (
            !still ||
            permissionRefusal(still, STREAM_SCOPE, req.headers.origin, services.access.publicOrigin)
          )
            end()
        },
        () => {
          // The credential database is unreachable: keep the stream; the next re-check decides.
        },
      )
    }, recheckMs)
    const renew = setInterval(
      () => {
        Promise.all(slots.map((slot) => limiter.store.renew(slot.policy, slot.subject, token, leaseMs))).then(
          (held) => {
            if (!held.every(Boolean)) end()
          },
          () => {
            // The limiter store is unreachable: the lease runs out, and a later renewal ends the stream.
          },
        )
      },
      Math.max(250, Math.floor(leaseMs / 3)),
    )
  }

  return Object.assign(handle, {
    async close() {
      for (const end of [...open]) end()
      if (listener !== options.listener) await listener?.close()
    },
  })
}
