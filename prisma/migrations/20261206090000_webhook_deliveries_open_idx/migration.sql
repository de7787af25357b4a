-- Webhook fairness (docs/push.md, "Fair delivery"): a delivery job's priority is its endpoint's
-- backlog when it is queued, counted on the endpoint's open deliveries (pending or retrying).
-- Partial: delivered, failed and skipped rows (nearly all of the log) cost no entry.
CREATE INDEX "webhook_deliveries_open_idx" ON "webhook_deliveries"("endpoint_id") WHERE "status" IN ('pending', 'retrying');
