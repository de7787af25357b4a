-- ERC-1155 (docs/database.md, "ERC-1155"; docs/indexer.md, "ERC-1155").

-- NULL on ERC-721 rows (amount 1, and no new bytes on the largest table);
-- the value of the id/value pair on ERC-1155 rows.
ALTER TABLE "transfers" ADD COLUMN "amount" DECIMAL(78,0);

-- NULL on ERC-721 tokens. An ERC-1155 token keeps current_owner at the zero
-- address (its holders are in token_balances) and is_burned = (total_supply = 0).
ALTER TABLE "tokens" ADD COLUMN "total_supply" DECIMAL(78,0),
                     ADD COLUMN "holder_count" INTEGER;

-- Balance of each holder of each ERC-1155 token; rows with a zero balance are deleted.
CREATE TABLE "token_balances" (
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "owner" VARCHAR(42) COLLATE "C" NOT NULL,
    "balance" DECIMAL(78,0) NOT NULL,

    CONSTRAINT "token_balances_pkey" PRIMARY KEY ("collection_address", "token_id", "owner")
);
-- A wallet's ERC-1155 holdings.
CREATE INDEX "token_balances_owner_idx" ON "token_balances"("owner", "collection_address", "token_id");
-- A token's holders, largest balance first.
CREATE INDEX "token_balances_holders_idx" ON "token_balances"("collection_address", "token_id", "balance" DESC, "owner");

-- ERC-1155 URI events: the newest per token takes precedence over uri(id). Rows of
-- orphaned blocks are deleted with the block, as transfers are.
CREATE TABLE "erc1155_uris" (
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "block_number" BIGINT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "transaction_hash" VARCHAR(66) COLLATE "C" NOT NULL,
    "uri" TEXT NOT NULL,

    CONSTRAINT "erc1155_uris_pkey" PRIMARY KEY ("collection_address", "token_id", "block_number", "log_index")
);
CREATE INDEX "erc1155_uris_block_idx" ON "erc1155_uris"("block_number");
