-- A transaction that removes a transfer and puts it back cancels its 'removed' entry only
-- when the row comes back unchanged (docs/push.md, "The activity journal"). Until now the
-- insert cancelled it on identity (transaction_hash, log_index, batch_index) and block hash
-- alone, and journaled no 'added': a repair (sync/verify-confirmed.ts) that corrected a row
-- in place (another recipient, token, amount or sender, with the same identity and block)
-- left the journal, and so webhooks and the live stream, with the wrong original 'added'.
-- Now the cancellation also compares what the entry carries; a row put back with other
-- content keeps its 'removed' entry and is journaled as 'added'.
-- The trigger function of 20261130092000_activity_journal_amount, unchanged but for the
-- content comparison in `cancelled`.
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
       AND j.collection_address = n.collection_address AND j.token_id = n.token_id
       AND j.from_address = n.from_address AND j.to_address = n.to_address
       AND j.event_type = n.event_type AND j.block_number = n.block_number
       AND j.block_timestamp = n.block_timestamp AND j.amount IS NOT DISTINCT FROM n.amount
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
