-- CORS preflights look up one origin at a time: does any active key allow it?
-- (docs/auth.md, "Origins and CORS"). allowed_origins @> ARRAY[$1] uses this index.
CREATE INDEX "api_keys_allowed_origins_idx" ON "api_keys" USING GIN ("allowed_origins");
