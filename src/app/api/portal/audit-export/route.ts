/**
 * The portal's audit-trail export (src/server/api/portal/audit-export.ts),
 * behind the same CSRF check as /api/trpc: a request the browser marks
 * cross-site is refused.
 */
import { createAuditExportHandler } from '@/server/api/portal/audit-export'
import type { PortalHandler } from '@/server/api/portal/handler'
import { getSessionUser } from '@/server/auth/next-auth'
import { getServices } from '@/server/services'
import { csrfRefusal } from '../../trpc/[trpc]/csrf'

export const dynamic = 'force-dynamic'

let exportHandler: PortalHandler | undefined

export async function GET(req: Request): Promise<Response> {
  const services = getServices()
  const refusal = csrfRefusal(req, new URL(services.config.PUBLIC_URL).origin)
  if (refusal) return refusal
  exportHandler ??= createAuditExportHandler(services, getSessionUser)
  return exportHandler(req)
}
