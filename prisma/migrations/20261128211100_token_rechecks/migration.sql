-- Metadata that stays fresh (docs/metadata.md, "Freshness").

-- Settled token outcomes that can change with time are checked again at
-- metadata_recheck_at (1 h, 6 h, 24 h, then weekly), apart from the queue's
-- backlog (metadata_next_attempt_at). Partial: most tokens never have one
-- (schema.prisma cannot state the predicate; the drift test compares columns).
ALTER TABLE "tokens" ADD COLUMN "metadata_recheck_at" TIMESTAMPTZ(6);
CREATE INDEX "tokens_metadata_recheck_idx" ON "tokens"("metadata_recheck_at")
  WHERE "metadata_recheck_at" IS NOT NULL;

-- Tokens already settled on such an outcome get their first re-check within a day.
UPDATE "tokens" SET "metadata_recheck_at" = now() + random() * interval '1 day'
 WHERE "metadata_status" IN ('timeout', 'http_error', 'invalid_json', 'uri_reverted', 'invalid_uri', 'unsupported_type')
   AND "metadata_next_attempt_at" IS NULL AND NOT "is_burned";
