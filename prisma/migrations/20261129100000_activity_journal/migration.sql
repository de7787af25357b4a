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

-- Pruning by age; a repair's cancellation (below) finds an event's entry by identity.
CREATE INDEX "activity_journal_recorded_at_idx" ON "activity_journal"("recorded_at");
CREATE INDEX "activity_journal_event_idx" ON "activity_journal"("transaction_hash", "log_index", "batch_index");

-- Rows from the chain whose block is at most a day old are journaled (the trigger's WHEN:
-- a backfill of old history is not news, and costs nothing here). A transaction that
-- removes a row and puts it back unchanged (a repair rewrites verified blocks) leaves
-- nothing: the insert cancels that transaction's 'removed' entry instead of journaling
-- an 'added' one. nft.journal_removed_from (transaction-local) is the first seq this
-- transaction journaled as removed.
CREATE FUNCTION "activity_journal_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entry BIGINT;
BEGIN
  INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
                                event_type, block_number, block_hash, block_timestamp, transaction_hash,
                                log_index, batch_index, head_block)
  VALUES ('removed', OLD.id, OLD.collection_address, OLD.token_id, OLD.from_address, OLD.to_address,
          OLD.event_type, OLD.block_number, OLD.block_hash, OLD.block_timestamp, OLD.transaction_hash,
          OLD.log_index, OLD.batch_index,
          coalesce((SELECT max(last_seen_block) FROM indexer_state), 0))
  RETURNING seq INTO entry;
  IF coalesce(current_setting('nft.journal_removed_from', true), '') = '' THEN
    PERFORM set_config('nft.journal_removed_from', entry::text, true);
  END IF;
  PERFORM pg_notify('activity_journal', '');
  RETURN NULL;
END $$;

CREATE FUNCTION "activity_journal_added"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  removed_from BIGINT := nullif(current_setting('nft.journal_removed_from', true), '')::bigint;
BEGIN
  IF removed_from IS NOT NULL THEN
    DELETE FROM activity_journal
     WHERE seq >= removed_from AND kind = 'removed'
       AND transaction_hash = NEW.transaction_hash AND log_index = NEW.log_index
       AND batch_index = NEW.batch_index AND block_hash IS NOT DISTINCT FROM NEW.block_hash;
    IF FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
                                event_type, block_number, block_hash, block_timestamp, transaction_hash,
                                log_index, batch_index, head_block)
  VALUES ('added', NEW.id, NEW.collection_address, NEW.token_id, NEW.from_address, NEW.to_address,
          NEW.event_type, NEW.block_number, NEW.block_hash, NEW.block_timestamp, NEW.transaction_hash,
          NEW.log_index, NEW.batch_index,
          coalesce((SELECT max(last_seen_block) FROM indexer_state), 0));
  PERFORM pg_notify('activity_journal', '');
  RETURN NULL;
END $$;

CREATE TRIGGER "transfers_journal_removed" AFTER DELETE ON "transfers" FOR EACH ROW
  WHEN (OLD.source = 'rpc' AND OLD.block_timestamp > now() - interval '1 day')
  EXECUTE FUNCTION activity_journal_removed();

CREATE TRIGGER "transfers_journal_added" AFTER INSERT ON "transfers" FOR EACH ROW
  WHEN (NEW.source = 'rpc' AND NEW.block_timestamp > now() - interval '1 day')
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
