-- Refreshes asked for in the portal (docs/portal.md, "Token view"; docs/metadata.md,
-- "Refresh requests"). The web process writes a row (and NOTIFY metadata_refresh);
-- the indexer applies it and stamps applied_at. One row per target: the row's
-- requested_at is also the per-target limit (one refresh per window, across users).
-- token_id -1 names the collection itself (name, symbol, contractURI and every token).
CREATE TABLE "metadata_refresh_requests" (
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "requested_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requested_by" BIGINT,
    "applied_at" TIMESTAMPTZ(6),

    CONSTRAINT "metadata_refresh_requests_pkey" PRIMARY KEY ("collection_address", "token_id")
);

-- The indexer's pick-up: requests not applied yet. Partial (schema.prisma cannot state the
-- predicate; the drift test compares columns).
CREATE INDEX "metadata_refresh_requests_pending_idx" ON "metadata_refresh_requests"("requested_at")
  WHERE "applied_at" IS NULL;
