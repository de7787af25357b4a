-- The collections whose name or symbol contains a pattern, read through the trigram indexes
-- alone (a bitmap of their matches): the far part of a collection search (docs/database.md,
-- "Collection search"). Left to choose, the planner walks the whole list in order for a pattern
-- it guesses common that is rare, reading every collection to return a few or none.
-- Not inlined (it has SET clauses), so those settings hold for its own statement only.
CREATE FUNCTION collections_matching(pattern text)
RETURNS TABLE (id bigint, created_at timestamptz, listed boolean, standard text)
LANGUAGE sql STABLE
SET enable_seqscan = off
SET enable_indexscan = off
AS $$
  SELECT c.id, c.created_at, c.listed, c.standard FROM collections c
   WHERE c.name ILIKE $1 OR c.symbol ILIKE $1
$$;
