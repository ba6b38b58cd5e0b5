CREATE TABLE IF NOT EXISTS "messages" (
  "id" bigserial PRIMARY KEY,
  "wamid" varchar(255) NOT NULL UNIQUE,
  "direction" varchar(8) NOT NULL,
  "phone" varchar(20),
  "sender_kind" varchar(10),
  "body" text,
  "status" varchar(10),
  "error_code" integer,
  "sent_at" timestamp with time zone,
  "status_at" timestamp with time zone,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "messages_created_at_idx" ON "messages" ("created_at");
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "messaging_owners" (
  "id" bigserial PRIMARY KEY,
  "phone" varchar(20) NOT NULL UNIQUE,
  "name" varchar(120) NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL
);
