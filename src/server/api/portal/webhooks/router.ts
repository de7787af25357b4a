/**
 * The signed-in user's webhook endpoints (portal only; no /v1 endpoint):
 * create (the signing secret shown once), list, enable/disable, rotate the
 * secret (shown once), delete, the delivery log, redeliver. Mutations: the
 * CSRF rules of /api/trpc apply.
 */
import { createPortalRouter, portalProcedure } from '@/server/api/trpc/portal'
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  setWebhookEnabled,
  webhookDeliveries,
} from './webhooks'
import {
  createWebhookInput,
  listWebhooksInput,
  redeliverInput,
  setWebhookEnabledInput,
  webhookDeliveriesInput,
  webhookIdInput,
} from './webhooks.schema'

export const webhooksRouter = createPortalRouter({
  list: portalProcedure.input(listWebhooksInput).query(({ ctx, input }) => listWebhooks(ctx, input)),
  create: portalProcedure.input(createWebhookInput).mutation(({ ctx, input }) => createWebhook(ctx, input)),
  setEnabled: portalProcedure
    .input(setWebhookEnabledInput)
    .mutation(({ ctx, input }) => setWebhookEnabled(ctx, input)),
  rotateSecret: portalProcedure
    .input(webhookIdInput)
    .mutation(({ ctx, input }) => rotateWebhookSecret(ctx, input)),
  delete: portalProcedure.input(webhookIdInput).mutation(({ ctx, input }) => deleteWebhook(ctx, input)),
  deliveries: portalProcedure
    .input(webhookDeliveriesInput)
    .query(({ ctx, input }) => webhookDeliveries(ctx, input)),
  redeliver: portalProcedure.input(redeliverInput).mutation(({ ctx, input }) => redeliver(ctx, input)),
})
