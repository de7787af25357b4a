/** An in-process web server (API only) for the access-control tests. */
import type { AddressInfo } from 'node:net'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import type { Services } from '@/server/api/trpc'
import { openDatabase } from '@/server/db/database'
import { createWebServer, type WebServer } from '@/server/http/server'

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
    ...env,
  } as unknown as NodeJS.ProcessEnv)
  const db = openDatabase(databaseUrl, { statementTimeoutMs: 20_000, max: 30 })
  const services: Services = { config, db, logger: createLogger({ level: 'silent' }) }
  const web = await createWebServer({ services })
  await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve))
  const { port } = web.server.address() as AddressInfo
  return {
    web,
    base: `http://127.0.0.1:${port}`,
    services,
    async close() {
      await web.close()
      await db.close()
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
