-- The audit trail of the MCP data tools: one row per call (who, which client, what, outcome).
CREATE TABLE IF NOT EXISTS `kiln_mcp_audit` (
  `id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
  `occurred_at` integer NOT NULL,
  `user_id` text,
  `tenant_id` text,
  `client_id` text,
  `tool` text NOT NULL,
  `model` text NOT NULL,
  `record_ids` text NOT NULL,
  `fields` text NOT NULL,
  `outcome` text NOT NULL,
  `duration_ms` integer NOT NULL,
  `message` text,
  `field_values` text
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `kiln_mcp_audit_occurred_idx` ON `kiln_mcp_audit` (`occurred_at`);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `kiln_mcp_audit_user_client_idx` ON `kiln_mcp_audit` (`user_id`, `client_id`, `occurred_at`);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `kiln_mcp_audit_client_idx` ON `kiln_mcp_audit` (`client_id`, `occurred_at`);
