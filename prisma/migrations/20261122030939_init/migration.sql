-- CreateExtension
CREATE EXTENSION IF NOT EXISTS "pg_trgm" WITH SCHEMA "public";

-- CreateTable
CREATE TABLE "collections" (
    "id" BIGSERIAL NOT NULL,
    "address" VARCHAR(42) NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "symbol" TEXT,
    "description" TEXT,
    "image_url" TEXT,
    "contract_uri" TEXT,
    "standard" TEXT NOT NULL DEFAULT 'ERC721',
    "listed" BOOLEAN NOT NULL DEFAULT false,
    "metadata_status" TEXT NOT NULL DEFAULT 'pending',
    "total_supply" BIGINT NOT NULL DEFAULT 0,
    "unique_holders" BIGINT NOT NULL DEFAULT 0,
    "total_transfers" BIGINT NOT NULL DEFAULT 0,
    "creator_address" VARCHAR(42),
    "deploy_tx_hash" VARCHAR(66),
    "deploy_block" BIGINT,
    "first_seen_block" BIGINT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "collections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "non_nft_contracts" (
    "address" VARCHAR(42) NOT NULL,
    "reason" TEXT NOT NULL,
    "checked_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "non_nft_contracts_pkey" PRIMARY KEY ("address")
);

-- CreateTable
CREATE TABLE "tokens" (
    "id" BIGSERIAL NOT NULL,
    "collection_address" VARCHAR(42) NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "current_owner" VARCHAR(42) NOT NULL,
    "is_burned" BOOLEAN NOT NULL DEFAULT false,
    "transfer_count" INTEGER NOT NULL DEFAULT 0,
    "minted_block" BIGINT,
    "last_transfer_block" BIGINT,
    "metadata_uri" TEXT,
    "metadata_status" TEXT NOT NULL DEFAULT 'pending',
    "metadata_attempts" INTEGER NOT NULL DEFAULT 0,
    "metadata_next_attempt_at" TIMESTAMPTZ(6) DEFAULT CURRENT_TIMESTAMP,
    "metadata_fetched_at" TIMESTAMPTZ(6),
    "metadata" JSONB,
    "name" TEXT,
    "image_url" TEXT,
    "media_sha256" CHAR(64),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transfers" (
    "id" BIGSERIAL NOT NULL,
    "collection_address" VARCHAR(42) NOT NULL,
    "token_id" DECIMAL(78,0) NOT NULL,
    "from_address" VARCHAR(42) NOT NULL,
    "to_address" VARCHAR(42) NOT NULL,
    "event_type" VARCHAR(8) NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" VARCHAR(66),
    "block_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "transaction_hash" VARCHAR(66) NOT NULL,
    "log_index" INTEGER NOT NULL,
    "batch_index" INTEGER NOT NULL DEFAULT 0,
    "source" VARCHAR(8) NOT NULL DEFAULT 'rpc',

    CONSTRAINT "transfers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "blocks" (
    "number" BIGINT NOT NULL,
    "hash" VARCHAR(66) NOT NULL,
    "parent_hash" VARCHAR(66) NOT NULL,
    "timestamp" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "blocks_pkey" PRIMARY KEY ("number")
);

-- CreateTable
CREATE TABLE "indexed_ranges" (
    "from_block" BIGINT NOT NULL,
    "to_block" BIGINT NOT NULL,

    CONSTRAINT "indexed_ranges_pkey" PRIMARY KEY ("from_block")
);

-- CreateTable
CREATE TABLE "indexer_state" (
    "network" TEXT NOT NULL,
    "chain_id" BIGINT NOT NULL,
    "start_block" BIGINT NOT NULL,
    "last_seen_block" BIGINT NOT NULL DEFAULT 0,
    "last_indexed_block" BIGINT,
    "last_confirmed_block" BIGINT NOT NULL DEFAULT 0,
    "coverage_status" TEXT NOT NULL DEFAULT 'unknown',
    "coverage_start_block" BIGINT,
    "coverage_verified_at" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "indexer_state_pkey" PRIMARY KEY ("network")
);

-- CreateTable
CREATE TABLE "media_objects" (
    "sha256" CHAR(64) NOT NULL,
    "media_type" TEXT NOT NULL,
    "byte_size" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "media_objects_pkey" PRIMARY KEY ("sha256")
);

-- CreateTable
CREATE TABLE "media_sources" (
    "url_sha256" CHAR(64) NOT NULL,
    "url" TEXT NOT NULL,
    "media_sha256" CHAR(64) NOT NULL,
    "fetched_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "media_sources_pkey" PRIMARY KEY ("url_sha256")
);

-- CreateTable
CREATE TABLE "users" (
    "id" BIGSERIAL NOT NULL,
    "address" VARCHAR(42) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_sign_in_at" TIMESTAMPTZ(6),

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "siwe_nonces" (
    "nonce" VARCHAR(64) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "siwe_nonces_pkey" PRIMARY KEY ("nonce")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" BIGSERIAL NOT NULL,
    "user_id" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "scopes" TEXT[],
    "allowed_origins" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotated_at" TIMESTAMPTZ(6),
    "revoked_at" TIMESTAMPTZ(6),
    "last_used_at" TIMESTAMPTZ(6),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key_secrets" (
    "id" BIGSERIAL NOT NULL,
    "key_id" BIGINT NOT NULL,
    "secret_hash" CHAR(64) NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6),

    CONSTRAINT "api_key_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "demo_tokens" (
    "id" BIGSERIAL NOT NULL,
    "token_hash" CHAR(64) NOT NULL,
    "client_ip" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "demo_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "user_id" BIGINT NOT NULL,
    "wallet_address" VARCHAR(42) NOT NULL,
    "action" TEXT NOT NULL,
    "key_id" BIGINT,
    "key_prefix" TEXT,
    "client_ip" TEXT,
    "user_agent" TEXT,
    "details" JSONB,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "collections_address_key" ON "collections"("address");

-- CreateIndex
CREATE INDEX "collections_listed_created_idx" ON "collections"("listed", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "collections_name_trgm_idx" ON "collections" USING GIN ("name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "collections_symbol_trgm_idx" ON "collections" USING GIN ("symbol" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "tokens_collection_live_idx" ON "tokens"("collection_address", "is_burned", "token_id", "id");

-- CreateIndex
CREATE INDEX "tokens_owner_idx" ON "tokens"("current_owner", "collection_address", "token_id", "id");

-- CreateIndex
CREATE INDEX "tokens_metadata_queue_idx" ON "tokens"("metadata_status", "metadata_next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "tokens_collection_token_key" ON "tokens"("collection_address", "token_id");

-- CreateIndex
CREATE INDEX "transfers_feed_idx" ON "transfers"("block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_event_type_feed_idx" ON "transfers"("event_type", "block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_collection_feed_idx" ON "transfers"("collection_address", "block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_collection_event_type_feed_idx" ON "transfers"("collection_address", "event_type", "block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_token_feed_idx" ON "transfers"("collection_address", "token_id", "block_timestamp" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transfers_block_idx" ON "transfers"("block_number");

-- CreateIndex
CREATE UNIQUE INDEX "transfers_event_key" ON "transfers"("transaction_hash", "log_index", "batch_index");

-- CreateIndex
CREATE UNIQUE INDEX "blocks_hash_key" ON "blocks"("hash");

-- CreateIndex
CREATE INDEX "media_sources_media_idx" ON "media_sources"("media_sha256");

-- CreateIndex
CREATE UNIQUE INDEX "users_address_key" ON "users"("address");

-- CreateIndex
CREATE INDEX "siwe_nonces_expires_idx" ON "siwe_nonces"("expires_at");

-- CreateIndex
CREATE INDEX "api_keys_user_idx" ON "api_keys"("user_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "api_key_secrets_secret_hash_key" ON "api_key_secrets"("secret_hash");

-- CreateIndex
CREATE INDEX "api_key_secrets_key_idx" ON "api_key_secrets"("key_id");

-- CreateIndex
CREATE UNIQUE INDEX "demo_tokens_token_hash_key" ON "demo_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "demo_tokens_expires_idx" ON "demo_tokens"("expires_at");

-- CreateIndex
CREATE INDEX "audit_events_user_idx" ON "audit_events"("user_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "tokens" ADD CONSTRAINT "tokens_media_sha256_fkey" FOREIGN KEY ("media_sha256") REFERENCES "media_objects"("sha256") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "media_sources" ADD CONSTRAINT "media_sources_media_sha256_fkey" FOREIGN KEY ("media_sha256") REFERENCES "media_objects"("sha256") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_key_secrets" ADD CONSTRAINT "api_key_secrets_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
