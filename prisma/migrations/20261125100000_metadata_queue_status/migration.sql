-- What the metadata queue last reported (docs/indexer.md, "Metadata and media
-- queue"): its backlog by outcome and the hosts it has backed off.
ALTER TABLE "indexer_state" ADD COLUMN "metadata_queue" JSONB;
