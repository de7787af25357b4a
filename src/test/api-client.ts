/**
 * The web server over a test database, and a client that calls /v1 the way
 * an API user does: `Authorization: Bearer <key>` with a real portal key
 * (created through the credentials code, so the whole access path runs).
 * Limits are raised so that tests measure the API, not the rate limiter.
 */
import type { AddressInfo } from 'node:net'
import { type Config, parseConfig } from '@/config/env'
import { createLogger, type Logger } from '@/config/logger'
import { openDatabase } from '@/db/database'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { clearIndexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createWebServer, type WebServer, type WebServerOptions } from '@/server/web-server'

export const TEST_LIMITS = 'sec=100000,min=10000000,concurrent=1000'

export interface ApiServer {
  base: string
  config: Config
  web: WebServer
  db: ReturnType<typeof openDatabase>
  services: Services
  /** The bearer credential every request sends. */
  token: string
  /** GET (or another method) with the credential; path includes the query. */
  request(path: string, init?: RequestInit): Promise<Response>
  /** GET and parse; throws unless 2xx. */
  json<T = unknown>(path: string): Promise<{ status: number; headers: Headers; body: T }>
  /** Forget the cached indexer snapshot (after a test changes indexer_state). */
  refresh(): void
  close(): Promise<void>
}

export async function startApiServer(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { logger?: Logger; rest?: WebServerOptions['rest'] } = {},
): Promise<ApiServer> {
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://api.test',
    RATE_LIMIT_KEY: TEST_LIMITS,
    RATE_LIMIT_IP_KEY: TEST_LIMITS,
    RATE_LIMIT_MEDIA: TEST_LIMITS,
    ...env,
  } as unknown as NodeJS.ProcessEnv)
  const db = openDatabase(databaseUrl, { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, max: 10 })
  const user = await ensureUser(db, '0x00000000000000000000000000000000000a11ce')
  const { secret } = await createApiKey(db, { userId: user.id, address: user.address }, { name: 'api tests' })
  const logger = options.logger ?? createLogger({ level: 'silent' })
  const services = createWebServices(config, { db, logger })
  const web = await createWebServer({ services, rest: options.rest })
  await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve))
  const { port } = web.server.address() as AddressInfo
  const base = `http://127.0.0.1:${port}`
  const request = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${secret}`, ...(init.headers as Record<string, string>) },
    })
  return {
    base,
    config,
    web,
    db,
    services,
    token: secret,
    request,
    async json<T>(path: string) {
      const res = await request(path)
      const text = await res.text()
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${text}`)
      return { status: res.status, headers: res.headers, body: JSON.parse(text) as T }
    },
    refresh() {
      clearIndexerSnapshot(db.pool)
    },
    async close() {
      await web.close()
      await closeWebServices(services)
    },
  }
}
