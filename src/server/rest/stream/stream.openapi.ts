/**
 * /v1/activity/stream in the OpenAPI document. The path answers
 * Server-Sent Events (stream.handler.ts), not a tRPC procedure's JSON, so it
 * is described by hand; openapi.ts adds it and its event schema.
 */
import { z } from 'zod'
import { pushEvent } from '@/server/push/activity-event'
import { STREAMS_PER_DEMO_TOKEN, STREAMS_PER_KEY } from '@/server/ratelimit/policy'
import { MAX_MIN_CONFIRMATIONS, STREAM_RETRY_MS } from './stream.handler'

export const STREAM_EVENT_SCHEMA = 'ActivityPushEvent'

/** The event's JSON Schema (the `data:` of every stream event, a webhook's body). */
export function pushEventSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(pushEvent, { io: 'output', unrepresentable: 'any' }) as {
    $defs: Record<string, Record<string, unknown>>
  }
  return generated.$defs[STREAM_EVENT_SCHEMA]!
}

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  description,
  schema,
})

export const streamPathItem = {
  get: {
    operationId: 'activity-stream',
    tags: ['Activity'],
    summary: 'Live activity stream (Server-Sent Events)',
    description: [
      'Extension: the activity feed pushed as it happens, as Server-Sent Events (`text/event-stream`), instead of polling the first page of `/v1/activity`. Each event has `id:` (the event id, increasing), `event:` (`activity.added` or `activity.removed`) and `data:` (an `ActivityPushEvent`, JSON). A reorganisation that takes away an event that was sent sends `activity.removed` with the same identity and `block_hash`.',
      `Without a resume point the stream starts with the next new event. To resume, send the id of the last event received as \`Last-Event-ID\` (a browser's EventSource does so by itself) or as \`since\`; the header wins when both are sent. Events of the last 24 hours are kept: a resume point inside them loses nothing and repeats nothing; an older one is refused with 410 \`RESUME_POINT_EXPIRED\`, whose message names the oldest id still available.`,
      `\`min_confirmations\` holds each addition until its block has that many blocks on top (later events wait behind it, order is kept); an event reorged away before it had them is never sent, nor its removal. The stream sends \`retry: ${STREAM_RETRY_MS}\` once and a \`: heartbeat\` comment every 15 s.`,
      `At most ${STREAMS_PER_KEY} streams per API key and ${STREAMS_PER_DEMO_TOKEN} per demo token are open at once, and per client address as many as its concurrent requests (10 by default) (429 beyond); the request itself counts against the usual limits. A stream ends when its credential is revoked, rotated out or expires (within about 2 s), and when the client leaves its events unread for 60 s (resume with \`Last-Event-ID\`). Errors before the stream starts are JSON envelopes; after it started, the stream only ends.`,
    ].join('\n\n'),
    parameters: [
      {
        in: 'query',
        name: 'collection',
        required: false,
        description: 'Only events of this contract (lowercase address).',
        schema: { type: 'string', pattern: '^0x[0-9a-f]{40}$' },
      },
      {
        in: 'query',
        name: 'event_type',
        required: false,
        description: 'Only events of this type: mint, transfer or burn.',
        schema: { type: 'string', enum: ['mint', 'transfer', 'burn'] },
      },
      {
        in: 'query',
        name: 'standard',
        required: false,
        description:
          'Which token standards to send: `ERC721`, `ERC1155` or `all`. Absent: ERC-721 only, as `/v1/activity`; given: each event carries `amount` (docs: "ERC-1155").',
        schema: { type: 'string', enum: ['ERC721', 'ERC1155', 'all'] },
      },
      {
        in: 'query',
        name: 'min_confirmations',
        required: false,
        description: `Blocks on top of an addition's block before it is sent, 0 to ${MAX_MIN_CONFIRMATIONS}; default 0 (at once).`,
        schema: { type: 'integer', minimum: 0, maximum: MAX_MIN_CONFIRMATIONS, default: 0 },
      },
      {
        in: 'query',
        name: 'since',
        required: false,
        description: 'Resume after this event id (`Last-Event-ID` wins when both are sent).',
        schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
        example: '48213',
      },
      {
        in: 'header',
        name: 'Last-Event-ID',
        required: false,
        description: 'Resume after this event id: the id of the last event received.',
        schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
        example: '48213',
      },
    ],
    responses: {
      '200': {
        description:
          'The stream: one Server-Sent Event per activity change; `data:` of each is an `ActivityPushEvent` (the schema describes the sequence of their `data` payloads).',
        headers: {
          'Cache-Control': header('Always `no-store`.', { type: 'string', const: 'no-store' }),
          'X-Accel-Buffering': header('Always `no`: proxies must not buffer the stream.', {
            type: 'string',
            const: 'no',
          }),
        },
        content: {
          'text/event-stream': {
            schema: {
              type: 'array',
              description: 'The events, in order, each a `data:` line.',
              items: { $ref: `#/components/schemas/${STREAM_EVENT_SCHEMA}` },
            },
          },
        },
      },
      '400': {
        description:
          'A bad parameter, or a `Last-Event-ID` / `since` that is not a positive integer or lies above the newest event id (`INVALID_ARGUMENT`). Not retried unchanged.',
      },
      '401': { description: 'Missing, malformed, expired or revoked credential (`UNAUTHORIZED`).' },
      '403': {
        description: 'The credential lacks `read:activity`, or the origin is not allowed (`FORBIDDEN`).',
      },
      '405': { description: 'Only GET (`METHOD_NOT_ALLOWED`); `Allow` lists it.' },
      '410': {
        description:
          'The resume point is older than the events kept (24 h) (`RESUME_POINT_EXPIRED`); the message names the oldest available id. Reconnect without a resume point (new events only), or from an id the message allows.',
      },
      '429': {
        description: `A rate limit is exceeded, or ${STREAMS_PER_KEY} streams of this API key (${STREAMS_PER_DEMO_TOKEN} of this demo token), or as many of this client address as its concurrent requests, are already open (\`RATE_LIMITED\`); retry after \`Retry-After\` seconds.`,
      },
      '503': {
        description: 'A dependency is unavailable (`SERVICE_UNAVAILABLE` or `RATE_LIMITER_UNAVAILABLE`).',
      },
    },
  },
}
