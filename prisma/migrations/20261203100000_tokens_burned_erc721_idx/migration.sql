-- The zero address's ERC-721 list (GET /v1/owners/0x0…0/nfts, the documented way to
-- list burned tokens; docs/api.md, "Ownership views"). Every ERC-1155 token row also has
-- the zero address as current_owner, so the zero address's range of tokens_owner_idx
-- holds every ERC-1155 token beside the burned ERC-721 ones, and the list's condition
-- `total_supply IS NULL` (ERC-721 only) is a column of the heap row: a page the burned
-- tokens after the cursor cannot fill fetched, and discarded, the row of every ERC-1155
-- token after it. Partial: the burned ERC-721 tokens only, in the list's order, so the
-- list (src/db/queries/tokens.ts, selectOwnerTokens: `current_owner = $1 AND
-- total_supply IS NULL` with the zero address) is one range of its own rows; a live
-- token or an ERC-1155 token costs no entry here.
CREATE INDEX "tokens_burned_erc721_idx" ON "tokens"("collection_address", "token_id", "id")
    WHERE "current_owner" = '0x0000000000000000000000000000000000000000' AND "total_supply" IS NULL;
