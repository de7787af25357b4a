-- Ownership views (docs/api.md, "Ownership views"; docs/database.md, "Which index serves which list").

-- GET /v1/owners/{address}/transfers: a wallet's transfers out and in, newest first, read as two
-- index ranges merged (the second leaving out rows whose from is the wallet, so a self-transfer is
-- listed once). Also a wallet's history for its holdings at a past block (at_block).
-- CreateIndex
CREATE INDEX "transfers_from_feed_idx" ON "transfers"("from_address", "block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_to_feed_idx" ON "transfers"("to_address", "block_timestamp" DESC, "id" DESC);

-- GET /v1/collections/{address}/owners: a collection's holders, most tokens first, then by address.
-- CreateIndex
CREATE INDEX "collection_holders_count_idx" ON "collection_holders"("collection_address", "token_count" DESC, "owner");

-- GET /v1/owners/{address}/collections: a wallet's collections by address, read from the index alone.
-- token_count is in it at no extra write: collection_holders_count_idx already holds token_count, so
-- no update of a count is HOT and each one writes an entry into every index of the table anyway.
-- CreateIndex
CREATE INDEX "collection_holders_owner_idx" ON "collection_holders"("owner", "collection_address", "token_count");
