-- Trait filters on a collection's NFTs (docs/api.md, "Traits"): attributes @> '[{"trait_type": …, "value": …}]'
-- uses this index, combined with the collection's range of tokens_collection_live_idx.
CREATE INDEX "tokens_attributes_idx" ON "tokens" USING GIN ("attributes" jsonb_path_ops);
