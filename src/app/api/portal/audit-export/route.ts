/**
 * The portal's audit-trail export (src/server/api/portal/keys/audit-export.ts),
 * behind the same CSRF check as /api/trpc: a request the browser marks
 * cross-site is refused.
 */

import { csrfRefusal } from '@/app/api/trpc/[trpc]/csrf'
import type { PortalHandler } from '@/server/api/portal/handler'
import { createAuditExportHandler } from '@/server/api/portal/keys/audit-export'
import { getSessionUser } from '@/server/portal-auth/next-auth'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

let exportHandler: PortalHandler | undefined

export async function GET(req: Request): Promise<Response> {
  const services = getServices()
  const refusal = csrfRefusal(req, new URL(services.config.PUBLIC_URL).origin)
  if (refusal) return refusal
  exportHandler ??= createAuditExportHandler(services, getSessionUser)
  return exportHandler(req)
}
