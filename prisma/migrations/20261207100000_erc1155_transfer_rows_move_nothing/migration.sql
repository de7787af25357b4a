-- In an ERC-1155 collection a transfer row without an amount (an ERC-721 Transfer a contract emits
-- beside the TransferSingle of the same move) moves nothing (docs/indexer.md, "ERC-1155"). Indexes
-- written before counted it as a value of 1, so a contract that emits the TransferSingle first had
-- each move counted twice. This recomputes the tokens of ERC-1155 collections that have such a row
-- from their stored transfers, as the indexer's rebuild does (src/indexer/store/multi-token-state.ts,
-- rebuildMultiTokens), then those collections' holder counts and counters. Other tokens are not
-- touched. Their ERC-1155 rows are read by collection (transfers_collection_event_type_feed_idx).
CREATE TEMP TABLE "repaired_tokens" ON COMMIT DROP AS
  SELECT DISTINCT tr."collection_address", tr."token_id"
    FROM "collections" c
    JOIN "transfers" tr ON tr."collection_address" = c."address"
   WHERE c."standard" = 'ERC1155' AND tr."amount" IS NULL;

CREATE TEMP TABLE "repaired_collections" ON COMMIT DROP AS
  SELECT DISTINCT "collection_address" FROM "repaired_tokens";

DELETE FROM "token_balances" b
 USING "repaired_tokens" k
 WHERE b."collection_address" = k."collection_address" AND b."token_id" = k."token_id";

INSERT INTO "token_balances" ("collection_address", "token_id", "owner", "balance")
SELECT m."collection_address", m."token_id", m."owner", sum(m."v")
  FROM (
    SELECT tr."collection_address", tr."token_id", tr."to_address" AS "owner", coalesce(tr."amount", 0) AS "v"
      FROM "transfers" tr JOIN "repaired_tokens" k USING ("collection_address", "token_id")
     WHERE tr."to_address" <> '0x0000000000000000000000000000000000000000'
    UNION ALL
    SELECT tr."collection_address", tr."token_id", tr."from_address", -coalesce(tr."amount", 0)
      FROM "transfers" tr JOIN "repaired_tokens" k USING ("collection_address", "token_id")
     WHERE tr."from_address" <> '0x0000000000000000000000000000000000000000'
  ) m
 GROUP BY m."collection_address", m."token_id", m."owner"
HAVING sum(m."v") <> 0;

UPDATE "tokens" t
   SET "total_supply" = s."supply", "is_burned" = s."supply" <= 0,
       "holder_count" = (SELECT count(*) FROM "token_balances" b
                          WHERE b."collection_address" = t."collection_address" AND b."token_id" = t."token_id"
                            AND b."balance" > 0),
       "updated_at" = now()
  FROM (
    SELECT k."collection_address", k."token_id",
           coalesce(sum(tr."amount") FILTER (WHERE tr."from_address" = '0x0000000000000000000000000000000000000000'), 0)
             - coalesce(sum(tr."amount") FILTER (WHERE tr."to_address" = '0x0000000000000000000000000000000000000000'), 0)
             AS "supply"
      FROM "repaired_tokens" k JOIN "transfers" tr USING ("collection_address", "token_id")
     GROUP BY k."collection_address", k."token_id"
  ) s
 WHERE t."collection_address" = s."collection_address" AND t."token_id" = s."token_id";

-- A holder's count is the collection's tokens of which it holds a positive balance.
DELETE FROM "collection_holders" h
 USING "repaired_collections" r
 WHERE h."collection_address" = r."collection_address";

INSERT INTO "collection_holders" ("collection_address", "owner", "token_count")
SELECT b."collection_address", b."owner", count(*)
  FROM "token_balances" b JOIN "repaired_collections" r USING ("collection_address")
 WHERE b."balance" > 0
 GROUP BY b."collection_address", b."owner";

UPDATE "collections" c
   SET "total_supply" = (SELECT count(*) FROM "tokens" t
                          WHERE t."collection_address" = c."address" AND t."total_supply" > 0),
       "unique_holders" = (SELECT count(*) FROM "collection_holders" h WHERE h."collection_address" = c."address"),
       "updated_at" = now()
  FROM "repaired_collections" r
 WHERE c."address" = r."collection_address";
