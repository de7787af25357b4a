/**
 * Internal procedures of the developer portal (no /v1 endpoint): the signed-in
 * user's API keys and audit trail. Secrets appear only in the results of
 * create and rotate, once.
 */
import { createPortalRouter, portalProcedure } from '@/server/api/portal/trpc'
import {
  auditEvents,
  createKey,
  exportAudit,
  keyUsage,
  listKeys,
  revokeKey,
  rotateKey,
  updateKey,
} from './keys.handler'
import {
  auditEventsInput,
  auditExportInput,
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
  /** The audit trail under the same filters as a CSV or JSON file's name, type and content. */
  auditExport: portalProcedure.input(auditExportInput).query(({ ctx, input }) => exportAudit(ctx, input)),
})
