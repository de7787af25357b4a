/** The developer portal's procedures, served at /api/trpc (src/app/api/trpc) for the signed-in user. */
import { keysRouter } from '@/server/api/portal/keys/router'
import { refreshRouter } from '@/server/api/portal/refresh/router'
import { sessionsRouter } from '@/server/api/portal/sessions/router'
import { webhooksRouter } from '@/server/api/portal/webhooks/router'
import { createPortalRouter } from '@/server/api/trpc/portal'

export const portalRouter = createPortalRouter({
  keys: keysRouter,
  refresh: refreshRouter,
  sessions: sessionsRouter,
  webhooks: webhooksRouter,
})

export type PortalRouter = typeof portalRouter
