-- Feeds of the API's ERC-1155 opt-in (docs/api.md, "ERC-1155"; docs/database.md).
-- Partial: only ERC-1155 rows (amount IS NOT NULL), so an ERC-721-only index
-- pays nothing for them and an ERC-721 row costs no entry here.

-- GET /v1/activity?standard=ERC1155, one range per event type as the full feed
-- (transfers_event_type_feed_idx) serves the default one (src/db/queries/transfers.ts).
CREATE INDEX "transfers_erc1155_feed_idx" ON "transfers"("event_type", "block_timestamp" DESC, "id" DESC)
    WHERE "amount" IS NOT NULL;

-- GET /v1/collections?standard=ERC1155: the listed ERC-1155 collections, newest first.
CREATE INDEX "collections_erc1155_listed_idx" ON "collections"("created_at" DESC, "id" DESC)
    WHERE "listed" AND "standard" = 'ERC1155';
