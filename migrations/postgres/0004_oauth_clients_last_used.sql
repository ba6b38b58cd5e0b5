-- When a registered client last got a token (written at most once a day), so clients that
-- never got one can be removed after a while.
ALTER TABLE "oauth_clients" ADD COLUMN IF NOT EXISTS "last_used_at" timestamp with time zone;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "oauth_clients_unused_idx" ON "oauth_clients" ("created_at") WHERE "last_used_at" IS NULL;
