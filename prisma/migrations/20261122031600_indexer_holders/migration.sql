-- AlterTable
ALTER TABLE "collections" ADD COLUMN     "image_source" TEXT;

-- CreateTable
CREATE TABLE "collection_holders" (
    "collection_address" VARCHAR(42) NOT NULL,
    "owner" VARCHAR(42) NOT NULL,
    "token_count" INTEGER NOT NULL,

    CONSTRAINT "collection_holders_pkey" PRIMARY KEY ("collection_address","owner")
);
