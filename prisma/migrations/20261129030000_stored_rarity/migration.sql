-- Stored rarity and trait counts (docs/api.md, "Rarity"; docs/database.md, "Stored rarity").
-- The indexer recomputes a whole collection in one statement (src/indexer/store/rarity.ts)
-- a few seconds after its tokens' attributes, metadata status or burn state change.

-- Collections whose ranking and trait counts are behind their tokens; a row per collection
-- while it is, `since` = the first change not yet computed. Filled by the triggers below.
CREATE TABLE "rarity_dirty" (
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "since" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rarity_dirty_pkey" PRIMARY KEY ("collection_address")
);

-- The latest computation of a collection: its counted tokens and its /traits answer
-- (types and values sorted and capped as served).
CREATE TABLE "collection_rarity" (
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "computed_at" TIMESTAMPTZ(6) NOT NULL,
    "token_count" INTEGER NOT NULL,
    "trait_type_count" INTEGER NOT NULL,
    "traits" JSONB NOT NULL,

    CONSTRAINT "collection_rarity_pkey" PRIMARY KEY ("collection_address")
);

-- A token's place in its collection's latest ranking. token_id = tokens.id (no foreign key,
-- as token_documents: a deleted token's row goes at the collection's next computation and is
-- never read meanwhile, reads join tokens). position: 1.. in (score DESC, token_id, id) order.
CREATE TABLE "token_rarity" (
    "token_id" BIGINT NOT NULL,
    "collection_address" VARCHAR(42) COLLATE "C" NOT NULL,
    "position" INTEGER NOT NULL,
    "rank" INTEGER NOT NULL,
    "score" DECIMAL NOT NULL,

    CONSTRAINT "token_rarity_pkey" PRIMARY KEY ("token_id")
);
-- sort=rarity pages: the collection's range in ranking order, keyset on position.
CREATE INDEX "token_rarity_position_idx" ON "token_rarity"("collection_address", "position");

-- What a ranking depends on: a counted token (metadata ok, not burned) appearing, going, or
-- changing its attributes. Row triggers with WHEN: the function runs only for such rows, so
-- transfers that change nothing of it cost one comparison. The upsert locks the mark's row
-- until the writer commits: a recompute that consumes the mark (DELETE, waiting for that lock)
-- reads the tokens after the writer's commit.
CREATE FUNCTION "mark_rarity_dirty"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rarity_dirty (collection_address)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.collection_address ELSE NEW.collection_address END)
  ON CONFLICT (collection_address) DO UPDATE SET since = rarity_dirty.since;
  RETURN NULL;
END
$$;

CREATE TRIGGER "tokens_rarity_dirty_update" AFTER UPDATE ON "tokens" FOR EACH ROW
  WHEN ((OLD.metadata_status = 'ok' OR NEW.metadata_status = 'ok')
        AND (OLD.is_burned IS DISTINCT FROM NEW.is_burned
             OR OLD.metadata_status IS DISTINCT FROM NEW.metadata_status
             OR OLD.attributes IS DISTINCT FROM NEW.attributes))
  EXECUTE FUNCTION "mark_rarity_dirty"();

CREATE TRIGGER "tokens_rarity_dirty_insert" AFTER INSERT ON "tokens" FOR EACH ROW
  WHEN (NEW.metadata_status = 'ok' AND NOT NEW.is_burned)
  EXECUTE FUNCTION "mark_rarity_dirty"();

CREATE TRIGGER "tokens_rarity_dirty_delete" AFTER DELETE ON "tokens" FOR EACH ROW
  WHEN (OLD.metadata_status = 'ok' AND NOT OLD.is_burned)
  EXECUTE FUNCTION "mark_rarity_dirty"();

-- Collections that already have counted tokens get their first computation.
INSERT INTO "rarity_dirty" ("collection_address")
SELECT DISTINCT "collection_address" FROM "tokens" WHERE "metadata_status" = 'ok' AND NOT "is_burned";
