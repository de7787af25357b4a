/**
 * The floor of the API benchmark: the same SQL as the /v1 endpoints (the very
 * same handler functions over a plain pg pool), served by bare node:http —
 * no tRPC, no zod, no credential or rate-limit checks, no ETag, no envelope.
 * What the full stack costs on top of the database is the distance to this.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type pg from 'pg'
import { createPool } from '@/db/client'
import type { StandardParam } from '@/lib/schemas'
import type { ReadContext } from '@/server/api/read/context'
import { indexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { listActivity } from '@/server/api/v1/activity/activity.handler'
import { listCollectionOwners } from '@/server/api/v1/collections/collection-owners.handler'
import { getCollection, listCollections } from '@/server/api/v1/collections/collections.handler'
import { getCollectionTraits } from '@/server/api/v1/collections/traits.handler'
import { getIndexerStatus } from '@/server/api/v1/indexer/status.handler'
import { listTokenHolders } from '@/server/api/v1/nfts/holders.handler'
import { getNft, listCollectionNfts } from '@/server/api/v1/nfts/nfts.handler'
import {
  listOwnerCollections,
  listOwnerNfts,
  listOwnerTransfers,
} from '@/server/api/v1/owners/owners.handler'
import { listTransfers } from '@/server/api/v1/transfers/transfers.handler'

type Query = Record<string, string>
type Route = [RegExp, (ctx: ReadContext, m: string[], q: Query, all: URLSearchParams) => Promise<unknown>]

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v))
const time = (q: Query) => ({
  limit: num(q.limit),
  before_timestamp: num(q.before_timestamp),
  before_id: num(q.before_id),
})

const ROUTES: Route[] = [
  [
    /^\/v1\/collections$/,
    (ctx, _m, q) => listCollections(ctx, { ...time(q), search: q.search, network: q.network }),
  ],
  [
    /^\/v1\/collections\/(0x[0-9a-f]{40})$/,
    async (ctx, m) => ({ data: await getCollection(ctx, { address: m[1]! }) }),
  ],
  [
    /^\/v1\/collections\/(0x[0-9a-f]{40})\/nfts$/,
    (ctx, m, q, all) =>
      listCollectionNfts(ctx, {
        address: m[1]!,
        limit: num(q.limit),
        after_token_id: q.after_token_id,
        after_id: num(q.after_id),
        include_burned: q.include_burned === 'true',
        trait: all.has('trait') ? all.getAll('trait') : undefined,
        sort: q.sort as 'token_id' | 'rarity' | undefined,
      }),
  ],
  [
    /^\/v1\/collections\/(0x[0-9a-f]{40})\/owners$/,
    (ctx, m, q) =>
      listCollectionOwners(ctx, {
        address: m[1]!,
        limit: num(q.limit),
        after_token_count: num(q.after_token_count),
        after_owner: q.after_owner,
        at_block: q.at_block,
      }),
  ],
  [
    /^\/v1\/collections\/(0x[0-9a-f]{40})\/traits$/,
    async (ctx, m) => ({ data: await getCollectionTraits(ctx, { address: m[1]! }) }),
  ],
  [
    /^\/v1\/collections\/(0x[0-9a-f]{40})\/transfers$/,
    (ctx, m, q) => listTransfers(ctx, { address: m[1]!, ...time(q) }),
  ],
  [
    /^\/v1\/nfts\/(0x[0-9a-f]{40})\/([0-9]+)\/transfers$/,
    (ctx, m, q) => listTransfers(ctx, { address: m[1]!, tokenId: m[2]!, ...time(q) }),
  ],
  [
    /^\/v1\/nfts\/(0x[0-9a-f]{40})\/([0-9]+)\/owners$/,
    (ctx, m, q) =>
      listTokenHolders(ctx, {
        address: m[1]!,
        tokenId: m[2]!,
        limit: num(q.limit),
        after_balance: q.after_balance,
        after_owner: q.after_owner,
      }),
  ],
  [
    /^\/v1\/nfts\/(0x[0-9a-f]{40})\/([0-9]+)$/,
    async (ctx, m, q) => ({
      data: await getNft(ctx, {
        address: m[1]!,
        tokenId: m[2]!,
        at_block: q.at_block,
        standard: q.standard as StandardParam | undefined,
      }),
    }),
  ],
  [
    /^\/v1\/owners\/(0x[0-9a-f]{40})\/nfts$/,
    (ctx, m, q, all) =>
      listOwnerNfts(ctx, {
        address: m[1]!,
        limit: num(q.limit),
        after_collection: q.after_collection,
        after_token_id: q.after_token_id,
        after_id: num(q.after_id),
        standard: q.standard as StandardParam | undefined,
        collection: all.has('collection') ? all.getAll('collection') : undefined,
        at_block: q.at_block,
      }),
  ],
  [
    /^\/v1\/owners\/(0x[0-9a-f]{40})\/collections$/,
    (ctx, m, q) =>
      listOwnerCollections(ctx, {
        address: m[1]!,
        limit: num(q.limit),
        after_collection: q.after_collection,
      }),
  ],
  [
    /^\/v1\/owners\/(0x[0-9a-f]{40})\/transfers$/,
    (ctx, m, q) =>
      listOwnerTransfers(ctx, {
        address: m[1]!,
        ...time(q),
        direction: q.direction as 'in' | 'out' | 'all' | undefined,
      }),
  ],
  [
    /^\/v1\/activity$/,
    (ctx, _m, q) =>
      listActivity(ctx, {
        ...time(q),
        collection: q.collection,
        event_type: q.event_type as 'mint' | 'transfer' | 'burn' | undefined,
      }),
  ],
]

export interface FloorServer {
  server: Server
  pool: pg.Pool
  close(): Promise<void>
}

export function createFloorServer(options: {
  url: string
  network: string
  publicUrl: string
  statementTimeoutMs?: number
  poolSize?: number
}): FloorServer {
  const pool = createPool(options.url, {
    statementTimeoutMs: options.statementTimeoutMs ?? 5000,
    max: options.poolSize ?? 10,
  })
  const config = { NETWORK: options.network, PUBLIC_URL: options.publicUrl, MEDIA_ORIGIN: undefined }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://floor')
    const query = Object.fromEntries(url.searchParams) as Query
    let snapshot: ReturnType<typeof indexerSnapshot> | undefined
    const ctx: ReadContext = {
      config,
      db: { pool },
      snapshot: () => {
        snapshot ??= indexerSnapshot(pool, options.network)
        return snapshot
      },
    }
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const payload = JSON.stringify(body)
      res.writeHead(status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(payload),
        ...headers,
      })
      res.end(payload)
    }
    const run = async () => {
      if (url.pathname === '/v1/indexer/status') {
        return { data: await getIndexerStatus({ config: config as never, db: { pool } as never }, {}) }
      }
      for (const [pattern, handler] of ROUTES) {
        const match = pattern.exec(url.pathname)
        if (match) return handler(ctx, match, query, url.searchParams)
      }
      return undefined
    }
    run().then(
      async (body) => {
        if (body === undefined) return send(404, { error: { code: 'NOT_FOUND', message: 'Not found.' } })
        const s = await ctx.snapshot()
        send(200, body, {
          'X-Chain-Head': s.lastSeenBlock.toString(),
          'X-Confirmed-Block': s.lastConfirmedBlock.toString(),
        })
      },
      (err) => send(err?.status ?? 500, { error: { code: 'ERROR', message: String(err?.message ?? err) } }),
    )
  })
  server.keepAliveTimeout = 5_000
  return {
    server,
    pool,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await pool.end()
    },
  }
}
