-- Requests per API key and hour, by status class (docs/portal.md, "Usage per key").
-- Web processes count in memory and add their counts here every few seconds;
-- rows older than 7 days are pruned.
CREATE TABLE "api_key_usage_hourly" (
    "key_id" BIGINT NOT NULL,
    "hour" TIMESTAMPTZ(6) NOT NULL,
    "ok_count" INTEGER NOT NULL DEFAULT 0,
    "client_error_count" INTEGER NOT NULL DEFAULT 0,
    "rate_limited_count" INTEGER NOT NULL DEFAULT 0,
    "server_error_count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "api_key_usage_hourly_pkey" PRIMARY KEY ("key_id","hour")
);

-- CreateIndex
CREATE INDEX "api_key_usage_hourly_hour_idx" ON "api_key_usage_hourly"("hour");

-- AddForeignKey
ALTER TABLE "api_key_usage_hourly" ADD CONSTRAINT "api_key_usage_hourly_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
