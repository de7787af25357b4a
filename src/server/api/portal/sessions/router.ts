/**
 * The signed-in user's portal sessions (no /v1 endpoint). "Sign out
 * everywhere" ends every session of the user — this browser's included —
 * on every web process from its next request (docs/auth.md, "Portal sessions").
 */
import { createPortalRouter, portalProcedure } from '@/server/api/trpc/portal'
import { endAllPortalSessions } from '@/server/portal-auth/portal-sessions'

export const sessionsRouter = createPortalRouter({
  /** Revokes every live session of the user; answers how many ended. */
  signOutEverywhere: portalProcedure.mutation(async ({ ctx }) => {
    const ended = await endAllPortalSessions(ctx.db, {
      userId: ctx.user.id,
      address: ctx.user.address,
      clientIp: ctx.clientIp,
      userAgent: ctx.userAgent,
    })
    return { sessions_ended: ended }
  }),
})
