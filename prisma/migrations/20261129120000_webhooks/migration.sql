-- Signed webhooks (docs/push.md, "Webhooks"): endpoints per API key and their
-- delivery log. An endpoint's `cursor` is the seq of the activity journal up to
-- which its deliveries are enqueued; its signing secret is stored encrypted
-- (AES-256-GCM under a key derived from AUTH_SECRET), never in the clear.
CREATE TABLE "webhook_endpoints" (
    "id" BIGSERIAL NOT NULL,
    "user_id" BIGINT NOT NULL,
    "key_id" BIGINT NOT NULL,
    "url" TEXT NOT NULL,
    "collection" VARCHAR(42) COLLATE "C",
    "event_type" VARCHAR(8),
    "min_confirmations" INTEGER NOT NULL DEFAULT 0,
    "secret_ciphertext" TEXT NOT NULL,
    "secret_prefix" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "disabled_at" TIMESTAMPTZ(6),
    "cursor" BIGINT NOT NULL DEFAULT 0,
    "failing_since" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoints_min_confirmations_check" CHECK ("min_confirmations" BETWEEN 0 AND 64)
);

-- CreateIndex
CREATE INDEX "webhook_endpoints_key_idx" ON "webhook_endpoints"("key_id");
CREATE INDEX "webhook_endpoints_user_idx" ON "webhook_endpoints"("user_id");

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- One delivery of one event to one endpoint (a redelivery is a new row with the same event;
-- `enqueued` false until the dispatcher has queued its job).
-- `payload` is the exact body sent, so every attempt sends the same bytes.
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "endpoint_id" BIGINT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "event_type" VARCHAR(32) NOT NULL,
    "payload" TEXT NOT NULL,
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "enqueued" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "last_duration_ms" INTEGER,
    "next_attempt_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries"("endpoint_id", "id" DESC);
CREATE INDEX "webhook_deliveries_created_at_idx" ON "webhook_deliveries"("created_at");
-- Redeliveries asked for in the portal, until the dispatcher turns them into jobs.
CREATE INDEX "webhook_deliveries_unqueued_idx" ON "webhook_deliveries"("id") WHERE NOT "enqueued";

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
