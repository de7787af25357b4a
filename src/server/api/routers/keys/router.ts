/**
 * Internal procedures of the developer portal (no /v1 endpoint): the signed-in
 * user's API keys and audit trail. Secrets appear only in the results of
 * create and rotate, once.
 */
import { createRouter, userProcedure } from '@/server/api/trpc'
import { auditEvents, createKey, listKeys, revokeKey, rotateKey } from './keys.handler'
import { auditEventsInput, createKeyInput, revokeKeyInput, rotateKeyInput } from './keys.schema'

export const keysRouter = createRouter({
  list: userProcedure.query(({ ctx }) => listKeys(ctx)),
  create: userProcedure.input(createKeyInput).mutation(({ ctx, input }) => createKey(ctx, input)),
  rotate: userProcedure.input(rotateKeyInput).mutation(({ ctx, input }) => rotateKey(ctx, input)),
  revoke: userProcedure.input(revokeKeyInput).mutation(({ ctx, input }) => revokeKey(ctx, input)),
  auditEvents: userProcedure.input(auditEventsInput).query(({ ctx, input }) => auditEvents(ctx, input)),
})
