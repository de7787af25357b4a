-- A token that comes back from burned (an ERC-721 id minted again, an ERC-1155 id whose supply
-- returns, or a burn a reorganisation took away) without a document is queued for its metadata
-- as an ERC-4906 event queues it (docs/metadata.md, "A token that comes back from burned"): the
-- outcome it got while burned was final (a reverting tokenURI is never re-checked), and it is a
-- live token again. One with a document ('ok') keeps it, as any token does until an ERC-4906
-- event or a refresh; one still 'pending' is queued already. A row trigger with WHEN, on every
-- path that writes tokens (commit, rebuild after a rollback or an import): other updates cost
-- one comparison.
CREATE FUNCTION "queue_unburned_token"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.metadata_status := 'pending';
  NEW.metadata_attempts := 0;
  NEW.metadata_next_attempt_at := now();
  NEW.metadata_recheck_at := NULL;
  RETURN NEW;
END
$$;

CREATE TRIGGER "tokens_unburned_requeue" BEFORE UPDATE ON "tokens" FOR EACH ROW
  WHEN (OLD.is_burned AND NOT NEW.is_burned AND NEW.metadata_status NOT IN ('ok', 'pending'))
  EXECUTE FUNCTION "queue_unburned_token"();
