-- The activity journal (docs/push.md): every change to the canonical transfers
-- of the last 24 hours, in commit order, for push delivery (the live stream and
-- webhooks). 'added' when a transfer becomes canonical, 'removed' when a
-- reorganisation (or a repair) takes it away. Written by triggers on transfers,
-- so every path that changes them (commit, rollback, repair) is journaled in
-- its own transaction. The indexer is the only writer of transfers (one at a
-- time, under the writers' lock), so seq order is commit order.
CREATE TABLE "activity_journal" (
    "seq" BIGSERIAL NOT NULL,
    "kind" VARCHAR(8) NOT NULL,
    "recorded_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "transfer_id" BIGINT NOT NULL,
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "from_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "to_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "event_type" VARCHAR(8) NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" VARCHAR(66) COLLATE "C",
    "block_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "transaction_hash" VARCHAR(66) COLLATE "C" NOT NULL,
    "log_index" INTEGER NOT NULL,
    "batch_index" INTEGER NOT NULL,
    "head_block" BIGINT NOT NULL,

    CONSTRAINT "activity_journal_pkey" PRIMARY KEY ("seq")
);

-- head_block: the indexer's head when the entry was recorded. A consumer that waits for
-- confirmations receives an addition that was later removed only if it had them before
-- its removal (head_block of the removal), so the decision is the same on every resume.

-- Pruning by age: entries are appended in time order, so a BRIN index suffices.
CREATE INDEX "activity_journal_recorded_at_idx" ON "activity_journal" USING BRIN ("recorded_at");
-- Removals by event (rare: reorgs), for a consumer deciding on an addition; partial, so
-- additions pay nothing for it (schema.prisma cannot state the predicate).
CREATE INDEX "activity_journal_removed_idx" ON "activity_journal"("transaction_hash", "log_index", "batch_index")
  WHERE "kind" = 'removed';

-- Statement-level triggers (one set-based insert per statement, not a function call per
-- row): rows from the chain whose block is at most a day old are journaled; a backfill of
-- old history is not news. A transaction that removes a row and puts it back unchanged
-- (a repair rewrites the verified blocks) leaves nothing: the insert cancels that
-- transaction's 'removed' entry instead of journaling an 'added' one.
-- nft.journal_removed_from (transaction-local) is the first seq this transaction
-- journaled as removed; the cancellation looks only at entries from there on.
CREATE FUNCTION "activity_journal_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head BIGINT := coalesce((SELECT max(last_seen_block) FROM indexer_state), 0);
  first_seq BIGINT;
BEGIN
  WITH journaled AS (
    INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
                                  event_type, block_number, block_hash, block_timestamp, transaction_hash,
                                  log_index, batch_index, head_block)
    SELECT 'removed', o.id, o.collection_address, o.token_id, o.from_address, o.to_address, o.event_type,
           o.block_number, o.block_hash, o.block_timestamp, o.transaction_hash, o.log_index, o.batch_index, head
      FROM old_rows o
     WHERE o.source = 'rpc' AND o.block_timestamp > now() - interval '1 day'
     ORDER BY o.id
    RETURNING seq)
  SELECT min(seq) INTO first_seq FROM journaled;
  IF first_seq IS NOT NULL THEN
    IF coalesce(current_setting('nft.journal_removed_from', true), '') = '' THEN
      PERFORM set_config('nft.journal_removed_from', first_seq::text, true);
    END IF;
    PERFORM pg_notify('activity_journal', '');
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "activity_journal_added"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head BIGINT := coalesce((SELECT max(last_seen_block) FROM indexer_state), 0);
  removed_from BIGINT := nullif(current_setting('nft.journal_removed_from', true), '')::bigint;
  added BIGINT;
BEGIN
  WITH cancelled AS (
    DELETE FROM activity_journal j USING new_rows n
     WHERE removed_from IS NOT NULL AND j.seq >= removed_from AND j.kind = 'removed'
       AND j.transaction_hash = n.transaction_hash AND j.log_index = n.log_index
       AND j.batch_index = n.batch_index AND j.block_hash IS NOT DISTINCT FROM n.block_hash
    RETURNING j.transaction_hash, j.log_index, j.batch_index
  ), journaled AS (
    INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
                                  event_type, block_number, block_hash, block_timestamp, transaction_hash,
                                  log_index, batch_index, head_block)
    SELECT 'added', n.id, n.collection_address, n.token_id, n.from_address, n.to_address, n.event_type,
           n.block_number, n.block_hash, n.block_timestamp, n.transaction_hash, n.log_index, n.batch_index, head
      FROM new_rows n
     WHERE n.source = 'rpc' AND n.block_timestamp > now() - interval '1 day'
       AND NOT EXISTS (SELECT 1 FROM cancelled c
                        WHERE c.transaction_hash = n.transaction_hash AND c.log_index = n.log_index
                          AND c.batch_index = n.batch_index)
     ORDER BY n.id
    RETURNING seq)
  SELECT count(*) INTO added FROM journaled;
  IF added > 0 THEN
    PERFORM pg_notify('activity_journal', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "transfers_journal_removed" AFTER DELETE ON "transfers"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
  EXECUTE FUNCTION activity_journal_removed();

CREATE TRIGGER "transfers_journal_added" AFTER INSERT ON "transfers"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION activity_journal_added();

-- Streams and webhooks that wait for confirmations wake when the head moves.
CREATE FUNCTION "indexer_head_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('indexer_head', NEW.last_seen_block::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "indexer_state_head_moved" AFTER UPDATE OF "last_seen_block" ON "indexer_state" FOR EACH ROW
  WHEN (OLD.last_seen_block IS DISTINCT FROM NEW.last_seen_block)
  EXECUTE FUNCTION indexer_head_moved();
