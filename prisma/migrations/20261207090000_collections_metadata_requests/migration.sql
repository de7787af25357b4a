-- Requests to read a collection again (ERC-7572 ContractURIUpdated, a portal refresh), counted: a
-- read writes its result only while the count is the one it was started with, so a request that
-- comes while the read is in flight is not settled by a read that began before it
-- (docs/metadata.md, "Freshness").
ALTER TABLE "collections" ADD COLUMN "metadata_requests" INTEGER NOT NULL DEFAULT 0;
