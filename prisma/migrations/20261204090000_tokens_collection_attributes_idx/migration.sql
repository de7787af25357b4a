-- Trait filters on a collection's NFTs (docs/api.md, "Traits"): the matching tokens of ONE
-- collection. tokens_attributes_idx (attributes alone) found the value's tokens in every
-- collection; a value common elsewhere made that set large, so the planner walked the whole
-- collection instead (a value absent from a 500,000-token collection: ~477,000 rows read) or
-- scanned the table. With the collection's column in the same GIN index (btree_gin's default
-- varchar_ops) one bitmap index scan intersects the collection's entry with the value's, and reads
-- only the collection's matching tokens, however common the value is in other collections.
-- Every query with attributes @> also names the collection (src/db/queries/tokens.ts, rarity.ts),
-- so the index on attributes alone is dropped. btree_gin goes to public, like pg_trgm, so every
-- schema finds its operator classes (src/db/connection-url.ts).
CREATE EXTENSION IF NOT EXISTS "btree_gin" WITH SCHEMA "public";

CREATE INDEX "tokens_collection_attributes_idx" ON "tokens" USING GIN ("collection_address", "attributes" jsonb_path_ops);

DROP INDEX "tokens_attributes_idx";
