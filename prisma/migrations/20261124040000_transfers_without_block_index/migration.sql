-- Reorganisation rollbacks find the transfers after the common ancestor by
-- time, through transfers_event_type_feed_idx (a block's timestamp is never
-- below its parent's; src/indexer/store/rollback.ts). The block-number index
-- served only them, and every stored transfer paid for an entry in it.

DROP INDEX "transfers_block_idx";
