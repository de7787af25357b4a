-- The whole metadata document (docs/metadata.md, "The whole document").
-- tokens gains the normalized fields the NFT responses serve; the document
-- itself moves to token_documents, so the rows the list endpoints read stay small.
ALTER TABLE "tokens" ADD COLUMN "description" TEXT,
                     ADD COLUMN "attributes" JSONB,
                     ADD COLUMN "animation_url" TEXT,
                     ADD COLUMN "external_url" TEXT,
                     ADD COLUMN "background_color" VARCHAR(6),
                     ADD COLUMN "metadata_updated_at" TIMESTAMPTZ(6);

-- One row per token whose document was fetched: the document as parsed
-- (a JSON object, sanitized for jsonb), where it was read and when.
-- token_id is tokens.id. No foreign key, so that tokens can still be truncated
-- alone; a row is deleted with its token (src/indexer/store/derived-state.ts).
CREATE TABLE "token_documents" (
    "token_id" BIGINT NOT NULL,
    "source_uri" TEXT NOT NULL,
    "fetched_at" TIMESTAMPTZ(6) NOT NULL,
    "document" JSONB NOT NULL,

    CONSTRAINT "token_documents_pkey" PRIMARY KEY ("token_id")
);

-- Documents kept so far move over. Their normalized fields are filled by the
-- indexer from the stored document (no fetch): it drains token_document_backfill
-- (src/indexer/metadata/stored-documents.ts).
INSERT INTO "token_documents" ("token_id", "source_uri", "fetched_at", "document")
SELECT "id", coalesce("metadata_uri", ''), coalesce("metadata_fetched_at", "updated_at"), "metadata"
  FROM "tokens" WHERE "metadata" IS NOT NULL;

CREATE TABLE "token_document_backfill" (
    "token_id" BIGINT NOT NULL,

    CONSTRAINT "token_document_backfill_pkey" PRIMARY KEY ("token_id")
);

INSERT INTO "token_document_backfill" ("token_id") SELECT "token_id" FROM "token_documents";

ALTER TABLE "tokens" DROP COLUMN "metadata";
