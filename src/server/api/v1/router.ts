/** The public /v1 API: served as REST by src/server/rest, documented in /openapi.json. */
import { activityRouter } from '@/server/api/routers/activity/router'
import { collectionsRouter } from '@/server/api/routers/collections/router'
import { demoTokenRouter } from '@/server/api/routers/demo-token/router'
import { indexerRouter } from '@/server/api/routers/indexer/router'
import { nftsRouter } from '@/server/api/routers/nfts/router'
import { ownersRouter } from '@/server/api/routers/owners/router'
import { transfersRouter } from '@/server/api/routers/transfers/router'
import { createV1Router } from './trpc'

export const v1Router = createV1Router({
  indexer: indexerRouter,
  demoToken: demoTokenRouter,
  collections: collectionsRouter,
  nfts: nftsRouter,
  owners: ownersRouter,
  transfers: transfersRouter,
  activity: activityRouter,
})

export type V1Router = typeof v1Router
