/**
 * The signed-in user's refreshes of token and collection metadata (portal
 * only: /v1 stays read-only). Mutations: the CSRF rules of /api/trpc apply.
 */
import { createPortalRouter, portalProcedure } from '@/server/api/trpc/portal'
import type { Actor } from '@/server/portal-auth/audit'
import { refreshCollection, refreshToken } from './refresh'
import { refreshCollectionInput, refreshTokenInput } from './refresh.schema'

const actorOf = (ctx: {
  user: { id: bigint; address: string }
  clientIp: string
  userAgent: string | null
}): Actor => ({
  userId: ctx.user.id,
  address: ctx.user.address,
  clientIp: ctx.clientIp,
  userAgent: ctx.userAgent,
})

export const refreshRouter = createPortalRouter({
  token: portalProcedure
    .input(refreshTokenInput)
    .mutation(({ ctx, input }) =>
      refreshToken(ctx, actorOf(ctx), { address: input.address, tokenId: BigInt(input.token_id) }),
    ),
  collection: portalProcedure
    .input(refreshCollectionInput)
    .mutation(({ ctx, input }) => refreshCollection(ctx, actorOf(ctx), { address: input.address })),
})
