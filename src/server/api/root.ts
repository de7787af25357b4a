/** The one router tree: public /v1 procedures and the portal's internal ones. */
import { demoTokenRouter } from './routers/demo-token/router'
import { indexerRouter } from './routers/indexer/router'
import { keysRouter } from './routers/keys/router'
import { createRouter } from './trpc'

export const appRouter = createRouter({
  indexer: indexerRouter,
  demoToken: demoTokenRouter,
  keys: keysRouter,
})

export type AppRouter = typeof appRouter
