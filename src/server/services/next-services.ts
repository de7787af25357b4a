/**
 * Services for code running inside Next.js (pages, /api routes): the web
 * process's own (src/server/services/web-services.ts), which the web server shares
 * before Next.js starts. Only a Next.js run without that server (`next
 * build` collecting pages) builds them here, through the same root.
 */
import 'server-only'
import { loadConfig } from '@/config/env'
import {
  createWebServices,
  type Services,
  sharedServices,
  shareWithNext,
} from '@/server/services/web-services'

export type { Services }

export function getServices(): Services {
  const existing = sharedServices()
  if (existing) return existing
  const services = createWebServices(loadConfig())
  shareWithNext(services)
  return services
}
