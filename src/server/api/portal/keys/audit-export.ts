/**
 * GET /api/portal/audit-export?format=csv|json&key_id&action&from&to: the
 * signed-in user's audit trail under the list's filters, as a file streamed
 * one page of EXPORT_PAGE_SIZE events at a time (docs/portal.md, "Audit
 * filters and export"). Admitted like the portal's procedures (./handler.ts:
 * per-IP and per-user limits); each page is read within the client address's
 * and the user's pool shares, and the request's concurrency slots are held
 * until the last byte is written or the download is cancelled.
 */

import { admitPortalRequest, type PortalHandler } from '@/server/api/portal/handler'
import { auditExportFile, auditExportStream } from '@/server/api/portal/keys/audit-file'
import { auditFilter } from '@/server/api/portal/keys/keys.handler'
import { auditExportInput } from '@/server/api/portal/keys/keys.schema'
import { userSubject } from '@/server/credentials/access'
import { ApiError } from '@/server/errors/api-error'
import { EXPORT_PAGE_SIZE, listAuditEvents } from '@/server/portal-auth/audit'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { ipSubject } from '@/server/ratelimit/ip'
import type { Services } from '@/server/services/web-services'

export function createAuditExportHandler(
  services: Services,
  sessionUser: () => Promise<SessionUser | null>,
): PortalHandler {
  return (req) =>
    admitPortalRequest(services, req, async (access, clientIp) => {
      const user = await sessionUser()
      if (!user) throw new ApiError('UNAUTHORIZED', 'Sign in first.')
      await access.limitUser(user.id)
      const input = auditExportInput.parse(Object.fromEntries(new URL(req.url).searchParams))
      const filter = auditFilter(input)
      const subjects = [ipSubject(clientIp), userSubject(user.id)]
      const page = (cursor?: string) =>
        services.poolShares.run(subjects, () =>
          listAuditEvents(services.db, user.id, { limit: EXPORT_PAGE_SIZE, cursor }, filter),
        )
      // The first page before the response starts: a failure still gets its status.
      const first = await page()
      const file = auditExportFile(input.format)
      const body = auditExportStream(input.format, first, page, (failure) => {
        access.release()
        if (failure !== undefined) services.logger.error({ err: failure }, 'audit export failed')
      })
      return new Response(body, {
        headers: {
          'Content-Type': file.contentType,
          'Content-Disposition': `attachment; filename="${file.filename}"`,
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
          ...access.headers(),
        },
      })
    })
}
