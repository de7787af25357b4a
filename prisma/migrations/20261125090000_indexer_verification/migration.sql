-- Confirmed means verified (docs/indexer.md, "Verification"): a block counts
-- as confirmed only once a second, independent read of its logs agreed with
-- what is stored. last_verified_block is the end of the verified prefix from
-- START_BLOCK; the counters say how often reads disagreed and how often
-- stored rows had to be repaired.
ALTER TABLE "indexer_state" ADD COLUMN "last_verified_block" BIGINT;
ALTER TABLE "indexer_state" ADD COLUMN "verification_mismatches" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "indexer_state" ADD COLUMN "verification_repairs" BIGINT NOT NULL DEFAULT 0;

-- Honest status when the node is unreachable: when a head was last read from
-- any endpoint, and each endpoint's state (by position, never its URL).
ALTER TABLE "indexer_state" ADD COLUMN "head_observed_at" TIMESTAMPTZ(6);
ALTER TABLE "indexer_state" ADD COLUMN "rpc_endpoints" JSONB;
