-- State that must outlive a restart without Redis (OAuth token families, grants, revocations):
-- kilnjs/db's DatabaseKeyValueStore. `expires_at` is milliseconds since the epoch; null never expires.
CREATE TABLE IF NOT EXISTS "kiln_state" (
  "key" text PRIMARY KEY,
  "value" text NOT NULL,
  "expires_at" bigint
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "kiln_state_expires_idx" ON "kiln_state" ("expires_at") WHERE "expires_at" IS NOT NULL;
