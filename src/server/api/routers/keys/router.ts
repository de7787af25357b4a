/**
 * Internal procedures of the developer portal (no /v1 endpoint): the signed-in
 * user's API keys and audit trail. Secrets appear only in the results of
 * create and rotate, once.
 */
import { createPortalRouter, portalProcedure } from '@/server/api/portal/trpc'
import { auditEvents, createKey, keyUsage, listKeys, revokeKey, rotateKey } from './keys.handler'
import {
  auditEventsInput,
  createKeyInput,
  keyUsageInput,
  revokeKeyInput,
  rotateKeyInput,
} from './keys.schema'

export const keysRouter = createPortalRouter({
  list: portalProcedure.query(({ ctx }) => listKeys(ctx)),
  create: portalProcedure.input(createKeyInput).mutation(({ ctx, input }) => createKey(ctx, input)),
  rotate: portalProcedure.input(rotateKeyInput).mutation(({ ctx, input }) => rotateKey(ctx, input)),
  revoke: portalProcedure.input(revokeKeyInput).mutation(({ ctx, input }) => revokeKey(ctx, input)),
  usage: portalProcedure.input(keyUsageInput).query(({ ctx, input }) => keyUsage(ctx, input)),
  auditEvents: portalProcedure.input(auditEventsInput).query(({ ctx, input }) => auditEvents(ctx, input)),
})
