-- Metadata that stays fresh (docs/metadata.md, "Freshness").

-- A collection whose reads failed on an RPC error is read again with backoff
-- (metadata_status 'failed' until then), never left out for good.
ALTER TABLE "collections" ADD COLUMN "metadata_attempts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "collections" ADD COLUMN "metadata_next_attempt_at" TIMESTAMPTZ(6);
CREATE INDEX "collections_metadata_queue_idx" ON "collections"("metadata_status", "metadata_next_attempt_at");
-- Collections a failed read had left out for good are read again now.
UPDATE "collections" SET "metadata_next_attempt_at" = now() WHERE "metadata_status" = 'failed';
