-- Hex strings (addresses, hashes) compare byte by byte: COLLATE "C" lets
-- PostgreSQL use memcmp and abbreviated keys for them instead of the
-- database's locale, which makes every index insert and lookup on these
-- columns cheaper. Lowercase hex sorts the same under both, so no query
-- changes meaning. Indexes on these columns are rebuilt by the ALTERs.

ALTER TABLE "collections"
  ALTER COLUMN "address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "creator_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "deploy_tx_hash" TYPE VARCHAR(66) COLLATE "C";

ALTER TABLE "non_nft_contracts"
  ALTER COLUMN "address" TYPE VARCHAR(42) COLLATE "C";

ALTER TABLE "media_objects"
  ALTER COLUMN "sha256" TYPE CHAR(64) COLLATE "C";

ALTER TABLE "media_sources"
  ALTER COLUMN "url_sha256" TYPE CHAR(64) COLLATE "C",
  ALTER COLUMN "media_sha256" TYPE CHAR(64) COLLATE "C";

ALTER TABLE "tokens"
  ALTER COLUMN "collection_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "current_owner" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "media_sha256" TYPE CHAR(64) COLLATE "C";

ALTER TABLE "collection_holders"
  ALTER COLUMN "collection_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "owner" TYPE VARCHAR(42) COLLATE "C";

ALTER TABLE "transfers"
  ALTER COLUMN "collection_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "from_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "to_address" TYPE VARCHAR(42) COLLATE "C",
  ALTER COLUMN "block_hash" TYPE VARCHAR(66) COLLATE "C",
  ALTER COLUMN "transaction_hash" TYPE VARCHAR(66) COLLATE "C";

ALTER TABLE "blocks"
  ALTER COLUMN "hash" TYPE VARCHAR(66) COLLATE "C",
  ALTER COLUMN "parent_hash" TYPE VARCHAR(66) COLLATE "C";

ALTER TABLE "users"
  ALTER COLUMN "address" TYPE VARCHAR(42) COLLATE "C";

ALTER TABLE "api_key_secrets"
  ALTER COLUMN "secret_hash" TYPE CHAR(64) COLLATE "C";

ALTER TABLE "demo_tokens"
  ALTER COLUMN "token_hash" TYPE CHAR(64) COLLATE "C";

ALTER TABLE "audit_events"
  ALTER COLUMN "wallet_address" TYPE VARCHAR(42) COLLATE "C";
