/** The one router tree: public /v1 procedures and the portal's internal ones. */
import { activityRouter } from './routers/activity/router'
import { collectionsRouter } from './routers/collections/router'
import { demoTokenRouter } from './routers/demo-token/router'
import { indexerRouter } from './routers/indexer/router'
import { keysRouter } from './routers/keys/router'
import { nftsRouter } from './routers/nfts/router'
import { ownersRouter } from './routers/owners/router'
import { transfersRouter } from './routers/transfers/router'
import { createRouter } from './trpc'

export const appRouter = createRouter({
  indexer: indexerRouter,
  demoToken: demoTokenRouter,
  keys: keysRouter,
  collections: collectionsRouter,
  nfts: nftsRouter,
  owners: ownersRouter,
  transfers: transfersRouter,
  activity: activityRouter,
})

export type AppRouter = typeof appRouter
