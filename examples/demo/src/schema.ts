import { relations } from 'drizzle-orm'
import {
  bigint,
  bigserial,
  boolean,
  integer,
  pgTable,
  text,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core'

/** The demo's models. `kilnjs make:api --all` generates the REST API from these tables. */
export const users = pgTable('users', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  email: varchar('email', { length: 255 }).notNull().unique(),
  name: varchar('name', { length: 120 }).notNull(),
  passwordHash: varchar('password_hash', { length: 255 }).notNull(),
  rememberToken: varchar('remember_token', { length: 100 }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

export const posts = pgTable('posts', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  title: varchar('title', { length: 200 }).notNull(),
  body: text('body').notNull(),
  published: boolean('published').notNull().default(false),
  tokenCount: integer('token_count').notNull().default(0),
  authorId: bigint('author_id', { mode: 'number' })
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

export const comments = pgTable('comments', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  postId: bigint('post_id', { mode: 'number' })
    .notNull()
    .references(() => posts.id, { onDelete: 'cascade' }),
  authorName: varchar('author_name', { length: 120 }).notNull(),
  body: text('body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

/**
 * Messaging: inbound text messages and the delivery status of sent ones, one row per provider
 * message id (`wamid`). The demo's messaging listeners write here; a status never moves back.
 */
export const messages = pgTable('messages', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  wamid: varchar('wamid', { length: 255 }).notNull().unique(),
  /** `inbound` (a customer or owner wrote) or `outbound` (a message this number sent). */
  direction: varchar('direction', { length: 8 }).notNull(),
  /** The other party: the sender of an inbound message, the recipient of an outbound one. */
  phone: varchar('phone', { length: 20 }),
  /** `Owner` or `Customer`, for inbound messages. */
  senderKind: varchar('sender_kind', { length: 10 }),
  body: text('body'),
  /** `Sent`, `Delivered`, `Read`, `Failed` or `Unknown`, for outbound messages. */
  status: varchar('status', { length: 10 }),
  errorCode: integer('error_code'),
  sentAt: timestamp('sent_at', { withTimezone: true }),
  statusAt: timestamp('status_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
})

export const usersRelations = relations(users, ({ many }) => ({ posts: many(posts) }))
export const postsRelations = relations(posts, ({ one, many }) => ({
  author: one(users, { fields: [posts.authorId], references: [users.id] }),
  comments: many(comments),
}))
export const commentsRelations = relations(comments, ({ one }) => ({
  post: one(posts, { fields: [comments.postId], references: [posts.id] }),
}))
