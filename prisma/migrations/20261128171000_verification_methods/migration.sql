-- How each verified block was verified (docs/indexer.md, "Verification"):
-- contiguous spans [{ from, to, method, sample_rate }], and whether a receipts
-- proof caught the endpoints' log index leaving logs out (then every block is
-- proven, and blocks verified by reads are proven again).
ALTER TABLE "indexer_state" ADD COLUMN "verification_spans" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "indexer_state" ADD COLUMN "log_index_untrusted" BOOLEAN NOT NULL DEFAULT false;
