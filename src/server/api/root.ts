/** The one router tree: public /v1 procedures and the portal's internal ones. */
import { indexerRouter } from './routers/indexer/router'
import { createRouter } from './trpc'

export const appRouter = createRouter({
  indexer: indexerRouter,
})

export type AppRouter = typeof appRouter
