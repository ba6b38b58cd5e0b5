CREATE TABLE IF NOT EXISTS "oauth_clients" (
  "client_id" text PRIMARY KEY,
  "client_name" text,
  "redirect_uris" text NOT NULL,
  "grant_types" text NOT NULL,
  "response_types" text NOT NULL,
  "token_endpoint_auth_method" text DEFAULT 'none' NOT NULL,
  "application_type" text,
  "scope" text,
  "metadata" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL
);
