/**
 * The Redis limiter store when its connection fails while Redis itself is up (a proxy between
 * them makes the faults): checks fail closed (503) and the store comes back by itself.
 *  - A connection that goes silent (a dead network path, a middlebox that keeps the socket
 *    open) is closed and opened anew within a few command timeouts (ioredis's socketTimeout),
 *    not when TCP gives up, minutes later or never.
 *  - A check whose answer is lost with its connection (Redis ran it) holds nothing after its
 *    503: its refund, which found the connection down, is sent once it is back.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LimitPolicy } from './policy'
import { RedisLimitStore } from './redis-store'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const target = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')

/** A TCP proxy to Redis that can silence its open connections, or drop the next answer and reset. */
async function startProxy() {
  let dropNext = false
  const live = new Set<{ dead: boolean; sockets: net.Socket[] }>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname)
    const conn = { dead: false, sockets: [client, upstream] }
    live.add(conn)
    client.on('data', (d) => conn.dead || upstream.write(d))
    upstream.on('data', (d) => {
      if (conn.dead) return
      if (dropNext) {
        dropNext = false
        client.destroy()
        upstream.destroy()
        return
      }
      client.write(d)
    })
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('close', () => b.destroy())
      a.on('error', () => b.destroy())
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    /** The connections open now stop carrying anything, both ways; their sockets stay open. */
    silenceCurrent() {
      for (const c of live) c.dead = true
    },
    /** The next answer from Redis is dropped and its connection reset. */
    dropNextReply() {
      dropNext = true
    },
    async close() {
      for (const c of live) for (const s of c.sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

let proxy: Awaited<ReturnType<typeof startProxy>>
let store: RedisLimitStore

beforeAll(async () => {
  proxy = await startProxy()
  store = new RedisLimitStore({
    url: `redis://127.0.0.1:${proxy.port}`,
    prefix: `connection-faults-${process.pid}:`,
    commandTimeoutMs: 200,
  })
  expect(await store.ready(3000)).toBe(true)
})

afterAll(async () => {
  await store?.close()
  await proxy?.close()
})

describe('the Redis limiter store when its connection fails', () => {
  it('a silent connection: fails closed, then recovers within a few command timeouts', async () => {
    const policy: LimitPolicy = { id: 'silent', windows: [{ name: 'sec', limit: 1000, windowMs: 1000 }] }
    expect((await store.acquire(policy, 's', 't0', 1000)).allowed).toBe(true)
    proxy.silenceCurrent()
    await expect(store.acquire(policy, 's', 't1', 1000)).rejects.toThrow(/unavailable/)
    // Redis answers a new connection at once: the limiter is back within 5 s (25 command timeouts).
    const deadline = Date.now() + 5000
    let recovered = false
    for (let i = 0; Date.now() < deadline && !recovered; i++) {
      recovered = await store.acquire(policy, 's', `t${i + 2}`, 1000).then(
        () => true,
        () => sleep(100).then(() => false),
      )
    }
    expect(recovered).toBe(true)
  }, 20_000)

  it('a check whose answer is lost with its connection: 503, and no slot or unit stays taken', async () => {
    const policy: LimitPolicy = {
      id: 'lost',
      windows: [{ name: 'min', limit: 3, windowMs: 60_000 }],
      concurrent: 1,
    }
    const subject = `s-${Date.now()}`
    // The script cache warm (EVALSHA answers, not NOSCRIPT).
    await store.acquire(policy, 'warm', 'w', 30_000)
    proxy.dropNextReply()
    await expect(store.acquire(policy, subject, 'lost-one', 30_000)).rejects.toThrow(/unavailable/)
    expect(await store.ready(5000)).toBe(true)
    // The refused check does not hold the subject's one slot for the lease, nor a unit.
    const next = await store.acquire(policy, subject, 'next', 30_000)
    expect({
      allowed: next.allowed,
      exceeded: next.exceeded,
      minuteRemaining: next.windows[0]!.remaining,
    }).toEqual({ allowed: true, exceeded: undefined, minuteRemaining: 2 })
  })
})
