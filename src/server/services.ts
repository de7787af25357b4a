/**
 * Services for code running inside Next.js (pages, /api routes): one set per
 * process, created on first use from the same configuration contract.
 */
import 'server-only'
import { loadConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { openDatabase } from '@/db/database'
import type { Services } from '@/server/api/trpc'

const globalForServices = globalThis as unknown as { nftServices?: Services }

export function getServices(): Services {
  if (globalForServices.nftServices) return globalForServices.nftServices
  const config = loadConfig()
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set: start the service with `npm start`')
  const services: Services = {
    config,
    db: openDatabase(config.DATABASE_URL, {
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      max: 5,
      applicationName: 'nft-portal',
    }),
    logger: createLogger({ level: config.LOG_LEVEL, name: 'portal' }),
  }
  globalForServices.nftServices = services
  return services
}
