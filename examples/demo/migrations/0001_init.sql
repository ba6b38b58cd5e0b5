CREATE TABLE IF NOT EXISTS "users" (
  "id" bigserial PRIMARY KEY,
  "email" varchar(255) NOT NULL UNIQUE,
  "name" varchar(120) NOT NULL,
  "password_hash" varchar(255) NOT NULL,
  "remember_token" varchar(100),
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "posts" (
  "id" bigserial PRIMARY KEY,
  "title" varchar(200) NOT NULL,
  "body" text NOT NULL,
  "published" boolean DEFAULT false NOT NULL,
  "token_count" integer DEFAULT 0 NOT NULL,
  "author_id" bigint NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "posts_author_id_idx" ON "posts" ("author_id");
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "comments" (
  "id" bigserial PRIMARY KEY,
  "post_id" bigint NOT NULL REFERENCES "posts"("id") ON DELETE CASCADE,
  "author_name" varchar(120) NOT NULL,
  "body" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "comments_post_id_idx" ON "comments" ("post_id");
