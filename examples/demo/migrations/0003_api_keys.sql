CREATE TABLE IF NOT EXISTS "api_keys" (
  "id" bigserial PRIMARY KEY,
  "name" varchar(255) NOT NULL,
  "prefix" varchar(16) NOT NULL,
  "hashed_key" varchar(64) NOT NULL,
  "scopes" text,
  "last_used_at" timestamp with time zone,
  "expires_at" timestamp with time zone,
  "revoked_at" timestamp with time zone,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "api_keys_prefix_idx" ON "api_keys" ("prefix");
