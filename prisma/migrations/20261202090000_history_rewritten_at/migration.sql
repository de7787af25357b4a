-- When the transfers at or below the confirmed block last changed (docs/api.md, "Snapshots";
-- docs/database.md, "Snapshots"). An answer at a confirmed block is final while that history
-- stands; it changes only when a rollback goes below the confirmed block (a reorganisation
-- deeper than CONFIRMATIONS, a repair of verified blocks), when history is imported below it,
-- or with a new START_BLOCK, and each of those writes sets this column in its own transaction.
-- Web processes keep snapshots at past blocks under its value, so a change retires every
-- snapshot computed from the old history. A timestamp, not a counter: a recreated
-- indexer_state row (a chain data reset) never repeats an old value.
ALTER TABLE "indexer_state" ADD COLUMN "history_rewritten_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp();
