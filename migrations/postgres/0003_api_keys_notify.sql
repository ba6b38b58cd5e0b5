-- Every instance that caches verified keys LISTENs on kiln_api_keys: a change to a column
-- verification reads (by kiln, the CLI, or SQL typed by hand) reaches them at once.
CREATE OR REPLACE FUNCTION "kiln_api_keys_notify"() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('kiln_api_keys', '*');
  ELSE
    PERFORM pg_notify('kiln_api_keys', OLD."id"::text);
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
DROP TRIGGER IF EXISTS "api_keys_notify_update" ON "api_keys";
--> statement-breakpoint
CREATE TRIGGER "api_keys_notify_update" AFTER UPDATE ON "api_keys" FOR EACH ROW
  WHEN (
    OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at"
    OR OLD."expires_at" IS DISTINCT FROM NEW."expires_at"
    OR OLD."scopes" IS DISTINCT FROM NEW."scopes"
    OR OLD."name" IS DISTINCT FROM NEW."name"
    OR OLD."hashed_key" IS DISTINCT FROM NEW."hashed_key"
    OR OLD."prefix" IS DISTINCT FROM NEW."prefix"
    OR OLD."id" IS DISTINCT FROM NEW."id"
  )
  EXECUTE FUNCTION "kiln_api_keys_notify"();
--> statement-breakpoint
DROP TRIGGER IF EXISTS "api_keys_notify_delete" ON "api_keys";
--> statement-breakpoint
CREATE TRIGGER "api_keys_notify_delete" AFTER DELETE ON "api_keys" FOR EACH ROW
  EXECUTE FUNCTION "kiln_api_keys_notify"();
--> statement-breakpoint
DROP TRIGGER IF EXISTS "api_keys_notify_truncate" ON "api_keys";
--> statement-breakpoint
CREATE TRIGGER "api_keys_notify_truncate" AFTER TRUNCATE ON "api_keys" FOR EACH STATEMENT
  EXECUTE FUNCTION "kiln_api_keys_notify"();
