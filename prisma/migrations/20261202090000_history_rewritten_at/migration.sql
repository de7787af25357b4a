-- When the history at or below the confirmed block last changed (docs/api.md, "Snapshots").
-- An answer at a confirmed block is final while that history stands; it changes only when
-- confirmed transfers are removed or added: a reorganisation deeper than CONFIRMATIONS, a
-- repair of verified blocks (both through the rollback path), an import of history before
-- START_BLOCK, or a new START_BLOCK. Web processes keep snapshots at past blocks under this
-- value, so a change here retires every snapshot computed from the old history. A timestamp,
-- not a counter: a recreated indexer_state row (chain data reset) never repeats an old value.
ALTER TABLE "indexer_state" ADD COLUMN "history_rewritten_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp();

-- Statement-level, as the activity journal's triggers: one pass over the statement's rows for
-- their lowest block (5 ms for 25,000 rows, where a correlated EXISTS took 32). At the time a
-- rollback's DELETE runs, last_confirmed_block is still the block confirmed before it (the
-- rollback lowers it afterwards, in the same transaction).
CREATE FUNCTION "indexer_history_rewritten"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE indexer_state SET history_rewritten_at = clock_timestamp()
   WHERE last_confirmed_block >= (SELECT min(block_number) FROM changed_rows);
  RETURN NULL;
END $$;

CREATE TRIGGER "transfers_confirmed_removed" AFTER DELETE ON "transfers"
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT
  EXECUTE FUNCTION indexer_history_rewritten();

CREATE TRIGGER "transfers_confirmed_added" AFTER INSERT ON "transfers"
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT
  EXECUTE FUNCTION indexer_history_rewritten();
