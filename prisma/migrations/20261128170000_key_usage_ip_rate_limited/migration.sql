-- A key's requests refused by the client IP's limit, apart from those its own limit refused
-- (docs/portal.md, "Usage per key").
ALTER TABLE "api_key_usage_hourly" ADD COLUMN "ip_rate_limited_count" INTEGER NOT NULL DEFAULT 0;
