/** The developer portal's procedures, served at /api/trpc (src/app/api/trpc) for the signed-in user. */
import { keysRouter } from '@/server/api/routers/keys/router'
import { createPortalRouter } from './trpc'

export const portalRouter = createPortalRouter({ keys: keysRouter })

export type PortalRouter = typeof portalRouter
