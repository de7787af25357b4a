/** An in-process web server (API only) for the access-control tests. */
import type { AddressInfo } from 'node:net'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { type Database, openDatabase } from '@/db/database'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createWebServer, type WebServer } from '@/server/web-server'

export interface TestWeb {
  web: WebServer
  base: string
  services: Services
  close(): Promise<void>
}

export async function serveApi(databaseUrl: string, env: Record<string, string> = {}): Promise<TestWeb> {
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    DB_POOL_SIZE: '30',
    ...env,
  } as unknown as NodeJS.ProcessEnv)
  const db = openDatabase(databaseUrl, { statementTimeoutMs: 20_000, max: config.DB_POOL_SIZE })
  // Credential lookups on a small pool of their own, as in the web process.
  const credentialDb = openDatabase(databaseUrl, { statementTimeoutMs: 20_000, max: 2 })
  const services = createWebServices(config, { db, credentialDb, logger: createLogger({ level: 'silent' }) })
  const web = await createWebServer({ services })
  await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve))
  const { port } = web.server.address() as AddressInfo
  // Warm up (module JIT, first Redis script load, Prisma) from a documentation
  // address, so that timing-sensitive tests do not pay for a cold process.
  for (const path of ['/v1/warm-up', '/v1/indexer/status']) {
    await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'X-Forwarded-For': '192.0.2.254' } }).then(
      (r) => r.arrayBuffer(),
    )
  }
  return {
    web,
    base: `http://127.0.0.1:${port}`,
    services,
    async close() {
      await web.close()
      await closeWebServices(services)
    },
  }
}

/** A GET with a bearer credential from a given client address (the servers trust one proxy hop). */
export function get(
  base: string,
  path: string,
  options: {
    credential?: string
    ip?: string
    origin?: string
    signal?: AbortSignal
    headers?: Record<string, string>
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.credential) headers.Authorization = `Bearer ${options.credential}`
  if (options.ip) headers['X-Forwarded-For'] = options.ip
  if (options.origin) headers.Origin = options.origin
  return fetch(`${base}${path}`, { headers, signal: options.signal })
}

let ipCounter = 0
/** A client address no other test of this process uses. */
export function uniqueIp(): string {
  ipCounter++
  return `10.${(process.pid >> 8) & 0xff}.${(ipCounter >> 8) & 0xff}.${ipCounter & 0xff}`
}

/** The database handle the key functions take, over a test database's clients. */
export function asDatabase(db: { pool: Database['pool']; prisma: Database['prisma'] }): Database {
  return { pool: db.pool, prisma: db.prisma, close: async () => {} }
}
