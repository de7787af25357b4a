/** The public /v1 API: served as REST by src/server/rest, documented in /openapi.json. */

import { createV1Router } from '@/server/api/trpc/v1'
import { activityRouter } from '@/server/api/v1/activity/router'
import { collectionsRouter } from '@/server/api/v1/collections/router'
import { demoTokenRouter } from '@/server/api/v1/demo-token/router'
import { indexerRouter } from '@/server/api/v1/indexer/router'
import { nftsRouter } from '@/server/api/v1/nfts/router'
import { ownersRouter } from '@/server/api/v1/owners/router'
import { transfersRouter } from '@/server/api/v1/transfers/router'

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
