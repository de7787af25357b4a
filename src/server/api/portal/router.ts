/** The developer portal's procedures, served at /api/trpc (src/app/api/trpc) for the signed-in user. */
import { keysRouter } from '@/server/api/routers/keys/router'
import { sessionsRouter } from '@/server/api/routers/sessions/router'
import { createPortalRouter } from './trpc'

export const portalRouter = createPortalRouter({ keys: keysRouter, sessions: sessionsRouter })

export type PortalRouter = typeof portalRouter
