import { sql } from 'drizzle-orm'
import {
  boolean,
  integer as pgInteger,
  pgTable,
  text as pgText,
  serial,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { Database } from '../../../src/db/index.ts'

/** Two models per dialect: `users` (with a password hash) and tenant-scoped `notes`. */
export const pgSchema = {
  users: pgTable('users', {
    id: serial('id').primaryKey(),
    email: varchar('email', { length: 255 }).notNull().unique(),
    name: varchar('name', { length: 120 }).notNull(),
    passwordHash: varchar('password_hash', { length: 255 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  }),
  notes: pgTable('notes', {
    id: serial('id').primaryKey(),
    tenantId: pgText('tenant_id').notNull(),
    title: varchar('title', { length: 100 }).notNull(),
    body: pgText('body'),
    pinned: boolean('pinned').notNull().default(false),
    priority: pgInteger('priority').notNull().default(0),
    tokenCount: pgInteger('token_count').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  }),
}

export const sqliteSchema = {
  users: sqliteTable('users', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    email: text('email', { length: 255 }).notNull().unique(),
    name: text('name', { length: 120 }).notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
    updatedAt: integer('updated_at', { mode: 'timestamp' }).notNull().default(sql`(unixepoch())`),
  }),
  notes: sqliteTable('notes', {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    title: text('title', { length: 100 }).notNull(),
    body: text('body'),
    pinned: integer('pinned', { mode: 'boolean' }).notNull().default(false),
    priority: integer('priority').notNull().default(0),
    tokenCount: integer('token_count').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  }),
}

const PG_DDL = [
  `CREATE TABLE users (
    id serial PRIMARY KEY,
    email varchar(255) NOT NULL UNIQUE,
    name varchar(120) NOT NULL,
    password_hash varchar(255) NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE notes (
    id serial PRIMARY KEY,
    tenant_id text NOT NULL,
    title varchar(100) NOT NULL,
    body text,
    pinned boolean NOT NULL DEFAULT false,
    priority integer NOT NULL DEFAULT 0,
    token_count integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL)`,
]

const SQLITE_DDL = [
  `CREATE TABLE users (
    id integer PRIMARY KEY AUTOINCREMENT,
    email text NOT NULL UNIQUE,
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at integer NOT NULL DEFAULT (unixepoch()),
    updated_at integer NOT NULL DEFAULT (unixepoch()))`,
  `CREATE TABLE notes (
    id integer PRIMARY KEY AUTOINCREMENT,
    tenant_id text NOT NULL,
    title text NOT NULL,
    body text,
    pinned integer NOT NULL DEFAULT 0,
    priority integer NOT NULL DEFAULT 0,
    token_count integer NOT NULL DEFAULT 0,
    created_at integer NOT NULL,
    updated_at integer NOT NULL)`,
]

export async function createTestTables(database: Database): Promise<void> {
  if (database.dialect === 'postgres') {
    for (const statement of PG_DDL) await database.db.execute(sql.raw(statement))
  } else {
    for (const statement of SQLITE_DDL) database.db.run(sql.raw(statement))
  }
}

export function schemaFor(database: Database): Record<string, unknown> {
  return database.dialect === 'postgres' ? pgSchema : sqliteSchema
}

/** Empties the test tables and restarts their ids at 1. */
export async function resetTestTables(database: Database): Promise<void> {
  if (database.dialect === 'postgres') {
    await database.db.execute(sql.raw('TRUNCATE users, notes RESTART IDENTITY'))
  } else {
    database.db.run(sql.raw('DELETE FROM users'))
    database.db.run(sql.raw('DELETE FROM notes'))
    database.db.run(sql.raw('DELETE FROM sqlite_sequence'))
  }
}

/**
 * Inserts a user as the app itself would (the tools cannot write a password hash) and returns
 * its id.
 */
export async function insertUser(
  database: Database,
  email: string,
  name: string,
): Promise<{ id: number }> {
  const statement = sql`INSERT INTO users (email, name, password_hash) VALUES (${email}, ${name}, 'scrypt$app-set') RETURNING id`
  const rows =
    database.dialect === 'postgres'
      ? (await database.db.execute(statement)).rows
      : database.db.all(statement)
  return { id: Number((rows[0] as { id: number }).id) }
}
