-- Server-side state of portal sessions (docs/auth.md, "Portal sessions"): the
-- session cookie's JWT carries the id, and every portal request checks the row
-- (revoked or past expires_at = signed out). Rows past expires_at are pruned
-- at sign-in.
CREATE TABLE "portal_sessions" (
    "id" VARCHAR(64) NOT NULL,
    "user_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "revoked_at" TIMESTAMPTZ(6),
    "client_ip" TEXT,
    "user_agent" TEXT,

    CONSTRAINT "portal_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "portal_sessions_user_idx" ON "portal_sessions"("user_id");

-- CreateIndex
CREATE INDEX "portal_sessions_expires_idx" ON "portal_sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
