CREATE TABLE IF NOT EXISTS `api_keys` (
  `id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  `name` text(255) NOT NULL,
  `prefix` text(16) NOT NULL,
  `hashed_key` text(64) NOT NULL,
  `scopes` text,
  `last_used_at` integer,
  `expires_at` integer,
  `revoked_at` integer,
  `created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `api_keys_prefix_idx` ON `api_keys` (`prefix`);
