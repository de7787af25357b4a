/**
 * Internal procedures of the developer portal (no /v1 endpoint): the signed-in
 * user's API keys and audit trail. Secrets appear only in the results of
 * create and rotate, once.
 */
import { createPortalRouter, portalProcedure } from '@/server/api/trpc/portal'
import { auditEvents, createKey, keyUsage, listKeys, revokeKey, rotateKey, updateKey } from './keys.handler'
import {
  auditEventsInput,
  createKeyInput,
  keyUsageInput,
  revokeKeyInput,
  rotateKeyInput,
  updateKeyInput,
} from './keys.schema'

export const keysRouter = createPortalRouter({
  list: portalProcedure.query(({ ctx }) => listKeys(ctx)),
  create: portalProcedure.input(createKeyInput).mutation(({ ctx, input }) => createKey(ctx, input)),
  update: portalProcedure.input(updateKeyInput).mutation(({ ctx, input }) => updateKey(ctx, input)),
  rotate: portalProcedure.input(rotateKeyInput).mutation(({ ctx, input }) => rotateKey(ctx, input)),
  revoke: portalProcedure.input(revokeKeyInput).mutation(({ ctx, input }) => revokeKey(ctx, input)),
  usage: portalProcedure.input(keyUsageInput).query(({ ctx, input }) => keyUsage(ctx, input)),
  auditEvents: portalProcedure.input(auditEventsInput).query(({ ctx, input }) => auditEvents(ctx, input)),
  // The export is streamed, which tRPC's batch link cannot: GET /api/portal/audit-export (src/server/api/portal/keys/audit-export.ts).
})
