-- The transfer feeds are indexed per event type only. A feed without an
-- event-type filter (all activity, a collection's transfers) is read as the
-- merge of the three event types' pages, each from the per-type index in
-- index order (src/server/api/read/transfer-row.ts, feedPageIds). Every
-- stored transfer then costs two feed-index entries instead of four, the
-- largest part of what the indexer's inserts spend on indexes.

DROP INDEX "transfers_feed_idx";
DROP INDEX "transfers_collection_feed_idx";
