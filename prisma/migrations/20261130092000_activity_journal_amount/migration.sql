-- The activity journal copies a transfer's amount (docs/push.md, "ERC-1155"): NULL on
-- ERC-721 rows, the id/value pair's value on ERC-1155 rows. Push delivery sends
-- ERC-1155 events only to a consumer that asks for them, and then with the amount,
-- as /v1/activity does (docs/api.md, "ERC-1155").
ALTER TABLE "activity_journal" ADD COLUMN "amount" DECIMAL(78,0);

-- The triggers of 20261129100000_activity_journal, unchanged but for the amount.
CREATE OR REPLACE FUNCTION "activity_journal_removed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head BIGINT := coalesce((SELECT max(last_seen_block) FROM indexer_state), 0);
  first_seq BIGINT;
BEGIN
  WITH journaled AS (
    INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
                                  event_type, block_number, block_hash, block_timestamp, transaction_hash,
                                  log_index, batch_index, amount, head_block)
    SELECT 'removed', o.id, o.collection_address, o.token_id, o.from_address, o.to_address, o.event_type,
           o.block_number, o.block_hash, o.block_timestamp, o.transaction_hash, o.log_index, o.batch_index, o.amount, head
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

CREATE OR REPLACE FUNCTION "activity_journal_added"() RETURNS trigger LANGUAGE plpgsql AS $$
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
                                  log_index, batch_index, amount, head_block)
    SELECT 'added', n.id, n.collection_address, n.token_id, n.from_address, n.to_address, n.event_type,
           n.block_number, n.block_hash, n.block_timestamp, n.transaction_hash, n.log_index, n.batch_index, n.amount, head
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

