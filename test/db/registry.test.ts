import { resolve } from 'node:path'
import { sql } from 'drizzle-orm'
import {
  pgEnum,
  integer as pgInteger,
  pgTable,
  text as pgText,
  primaryKey,
  serial,
  uuid,
} from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { describe, expect, it } from 'vitest'
import * as demoSchema from '../../examples/demo/src/schema.ts'
import { loadSchemaModule } from '../../src/cli/models/load.ts'
import { type ColumnInfo, createModelRegistry } from '../../src/db/index.ts'
import { modelName, pluralize, resourceName, singularize } from '../../src/db/models/inflect.ts'
import * as sqliteSchema from '../fixtures/sqlite-app/schema.ts'

const root = resolve(import.meta.dirname, '../..')

function column(columns: ColumnInfo[], name: string): ColumnInfo {
  const found = columns.find((c) => c.name === name)
  if (!found) throw new Error(`no column ${name}`)
  return found
}

describe('naming rules', () => {
  it.each([
    ['posts', 'Post', 'posts'],
    ['post', 'Post', 'posts'],
    ['blog_posts', 'BlogPost', 'blog_posts'],
    ['blogPosts', 'BlogPost', 'blog_posts'],
    ['BlogPost', 'BlogPost', 'blog_posts'],
    ['blog-posts', 'BlogPost', 'blog_posts'],
    ['people', 'Person', 'people'],
    ['person', 'Person', 'people'],
    ['categories', 'Category', 'categories'],
    ['category', 'Category', 'categories'],
    ['addresses', 'Address', 'addresses'],
    ['address', 'Address', 'addresses'],
    ['statuses', 'Status', 'statuses'],
    ['status', 'Status', 'statuses'],
    ['boxes', 'Box', 'boxes'],
    ['children', 'Child', 'children'],
    ['heroes', 'Hero', 'heroes'],
    ['quizzes', 'Quiz', 'quizzes'],
    ['analyses', 'Analysis', 'analyses'],
    ['indexes', 'Index', 'indexes'],
    ['knowledge_bases', 'KnowledgeBase', 'knowledge_bases'],
    ['archives', 'Archive', 'archives'],
    ['reserves', 'Reserve', 'reserves'],
    ['shelves', 'Shelf', 'shelves'],
    ['days', 'Day', 'days'],
    ['news', 'News', 'news'],
    ['user_data', 'UserData', 'user_data'],
    ['api_keys', 'ApiKey', 'api_keys'],
    ['oauth_clients', 'OauthClient', 'oauth_clients'],
    ['HTMLPages', 'HtmlPage', 'html_pages'],
  ])('table %s → model %s, resource %s', (table, model, resource) => {
    expect(modelName(table)).toBe(model)
    expect(resourceName(table)).toBe(resource)
  })

  it.each([
    ['post', 'posts'],
    ['category', 'categories'],
    ['person', 'people'],
    ['address', 'addresses'],
    ['day', 'days'],
    ['bus', 'buses'],
    ['matrix', 'matrices'],
    ['wife', 'wives'],
    ['sheep', 'sheep'],
  ])('pluralize(%s) = %s and back', (one, many) => {
    expect(pluralize(one)).toBe(many)
    expect(singularize(many)).toBe(one)
    expect(pluralize(many)).toBe(many)
    expect(singularize(one)).toBe(one)
  })
})

describe('createModelRegistry on the demo schema (Postgres)', () => {
  const registry = createModelRegistry(demoSchema, 'postgres')

  it('lists the tables as models sorted by name, ignoring relations', () => {
    expect(registry.dialect).toBe('postgres')
    const names = registry.names()
    // The demo grows with the capabilities; users, posts and comments are its core.
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(expect.arrayContaining(['Comment', 'Post', 'User']))
    expect(names.some((name) => name.endsWith('Relations'))).toBe(false)
    expect(
      ['comments', 'posts', 'users'].map((table) => {
        const model = registry.get(table)!
        return [model.name, model.resource, model.tableName, model.exportName]
      }),
    ).toEqual([
      ['Comment', 'comments', 'comments', 'comments'],
      ['Post', 'posts', 'posts', 'posts'],
      ['User', 'users', 'users', 'users'],
    ])
    expect(registry.models.every((m) => m.dialect === 'postgres')).toBe(true)
  })

  it('finds a model by name, resource or table name, case-insensitively', () => {
    const post = registry.get('Post')
    expect(post?.table).toBe(demoSchema.posts)
    expect(registry.get('posts')).toBe(post)
    expect(registry.get('POST')).toBe(post)
    expect(registry.get('articles')).toBeUndefined()
  })

  it('describes every column of posts', () => {
    const post = registry.get('posts')!
    expect(post.columns.map((c) => c.name)).toEqual([
      'id',
      'title',
      'body',
      'published',
      'token_count',
      'author_id',
      'created_at',
      'updated_at',
    ])
    expect(column(post.columns, 'id')).toEqual({
      name: 'id',
      key: 'id',
      sqlType: 'bigserial',
      dataType: 'integer',
      nullable: false,
      hasDefault: true,
      primaryKey: true,
      autoIncrement: true,
    })
    expect(column(post.columns, 'title')).toEqual({
      name: 'title',
      key: 'title',
      sqlType: 'varchar(200)',
      dataType: 'string',
      nullable: false,
      hasDefault: false,
      primaryKey: false,
      autoIncrement: false,
      length: 200,
    })
    expect(column(post.columns, 'body')).toMatchObject({ sqlType: 'text', dataType: 'string' })
    expect(column(post.columns, 'body').length).toBeUndefined()
    expect(column(post.columns, 'published')).toMatchObject({
      sqlType: 'boolean',
      dataType: 'boolean',
      nullable: false,
      hasDefault: true,
    })
    expect(column(post.columns, 'token_count')).toEqual({
      name: 'token_count',
      key: 'tokenCount',
      sqlType: 'integer',
      dataType: 'integer',
      nullable: false,
      hasDefault: true,
      primaryKey: false,
      autoIncrement: false,
    })
    expect(column(post.columns, 'author_id')).toMatchObject({
      key: 'authorId',
      sqlType: 'bigint',
      dataType: 'integer',
      hasDefault: false,
    })
    expect(column(post.columns, 'created_at')).toEqual({
      name: 'created_at',
      key: 'createdAt',
      sqlType: 'timestamp with time zone',
      dataType: 'date',
      nullable: false,
      hasDefault: true,
      primaryKey: false,
      autoIncrement: false,
    })
    expect(post.primaryKey).toBe(column(post.columns, 'id'))
  })

  it('writable fields leave out the auto-increment key and the timestamps', () => {
    expect(registry.get('Post')!.writableFields.map((c) => c.key)).toEqual([
      'title',
      'body',
      'published',
      'tokenCount',
      'authorId',
    ])
    const user = registry.get('User')!
    expect(user.writableFields.map((c) => c.name)).toEqual([
      'email',
      'name',
      'password_hash',
      'remember_token',
    ])
    expect(column(user.columns, 'remember_token')).toMatchObject({ nullable: true, length: 100 })
  })
})

describe('createModelRegistry on the SQLite fixture schema', () => {
  const registry = createModelRegistry(sqliteSchema, 'sqlite')

  it('lists the fixture models', () => {
    expect(registry.names()).toEqual(['Note', 'Post', 'User'])
    expect(registry.models.every((m) => m.dialect === 'sqlite')).toBe(true)
  })

  it('describes SQLite columns', () => {
    const user = registry.get('users')!
    expect(column(user.columns, 'id')).toEqual({
      name: 'id',
      key: 'id',
      sqlType: 'integer',
      dataType: 'integer',
      nullable: false,
      hasDefault: true,
      primaryKey: true,
      autoIncrement: true,
    })
    expect(column(user.columns, 'email')).toEqual({
      name: 'email',
      key: 'email',
      sqlType: 'text(255)',
      dataType: 'string',
      nullable: false,
      hasDefault: false,
      primaryKey: false,
      autoIncrement: false,
      length: 255,
    })
    expect(column(user.columns, 'is_admin')).toEqual({
      name: 'is_admin',
      key: 'isAdmin',
      sqlType: 'integer',
      dataType: 'boolean',
      nullable: false,
      hasDefault: true,
      primaryKey: false,
      autoIncrement: false,
    })
    expect(column(user.columns, 'created_at')).toMatchObject({
      sqlType: 'integer',
      dataType: 'date',
      hasDefault: true,
    })
    const post = registry.get('Post')!
    expect(column(post.columns, 'token_count')).toMatchObject({
      dataType: 'integer',
      hasDefault: true,
    })
    expect(column(post.columns, 'published_at')).toMatchObject({ dataType: 'date', nullable: true })
    expect(column(post.columns, 'body').length).toBeUndefined()
    const note = registry.get('notes')!
    expect(column(note.columns, 'tenant_id')).toMatchObject({
      key: 'tenantId',
      dataType: 'string',
      length: 64,
      nullable: false,
    })
    expect(note.writableFields.map((c) => c.name)).toEqual(['tenant_id', 'title', 'body'])
    expect(user.writableFields.map((c) => c.name)).toEqual([
      'email',
      'name',
      'password_hash',
      'remember_token',
      'is_admin',
    ])
  })

  it('a text primary key is writable; an integer one with a composite key is not auto-increment', () => {
    const tags = sqliteTable('tags', { slug: text('slug').primaryKey(), label: text('label') })
    const links = pgTable(
      'post_tags',
      { postId: pgInteger('post_id').notNull(), tagId: pgInteger('tag_id').notNull() },
      (table) => [primaryKey({ columns: [table.postId, table.tagId] })],
    )
    const tag = createModelRegistry({ tags }, 'sqlite').get('Tag')!
    expect(tag.primaryKey).toMatchObject({ name: 'slug', autoIncrement: false })
    expect(tag.writableFields.map((c) => c.name)).toEqual(['slug', 'label'])
    const link = createModelRegistry({ links }, 'postgres').get('post_tags')!
    expect(link.name).toBe('PostTag')
    expect(link.primaryKey).toBeUndefined()
    expect(link.columns.map((c) => [c.name, c.primaryKey, c.autoIncrement])).toEqual([
      ['post_id', true, false],
      ['tag_id', true, false],
    ])
    expect(link.writableFields.map((c) => c.name)).toEqual(['post_id', 'tag_id'])
  })
})

describe('createModelRegistry on other column kinds', () => {
  it('treats identity columns as auto-increment and leaves generated columns out of writable fields', () => {
    const mood = pgEnum('mood', ['happy', 'sad'])
    const things = pgTable('things', {
      id: pgInteger('id').primaryKey().generatedAlwaysAsIdentity(),
      ref: uuid('ref').defaultRandom().notNull(),
      label: pgText('label'),
      shout: pgText('shout').generatedAlwaysAs(sql`upper(label)`),
      mood: mood('mood'),
    })
    const model = createModelRegistry({ things, mood }, 'postgres').get('Thing')!
    expect(column(model.columns, 'id')).toMatchObject({
      sqlType: 'integer',
      autoIncrement: true,
      hasDefault: true,
    })
    expect(column(model.columns, 'ref')).toMatchObject({
      sqlType: 'uuid',
      dataType: 'string',
      hasDefault: true,
      autoIncrement: false,
    })
    expect(column(model.columns, 'shout')).toMatchObject({ hasDefault: true })
    expect(column(model.columns, 'mood')).toMatchObject({
      dataType: 'string',
      enumValues: ['happy', 'sad'],
    })
    expect(model.writableFields.map((c) => c.name)).toEqual(['ref', 'label', 'mood'])
  })
})

describe('createModelRegistry errors', () => {
  it('rejects tables of another dialect with a TypeError', () => {
    expect(() => createModelRegistry(demoSchema, 'sqlite')).toThrow(TypeError)
    expect(() => createModelRegistry(sqliteSchema, 'postgres')).toThrow(
      /export "\w+" is a SQLite \(sqlite-core\) table, but the app's dialect is Postgres/,
    )
  })

  it('rejects two tables with the same model name', () => {
    const a = sqliteTable('post', { id: integer('id').primaryKey() })
    const b = sqliteTable('posts', { id: integer('id').primaryKey() })
    expect(() => createModelRegistry({ a, b }, 'sqlite')).toThrow(/both map to the model name Post/)
  })

  it('lists a table exported twice once', () => {
    const items = pgTable('items', { id: serial('id').primaryKey() })
    const registry = createModelRegistry({ items, alias: items, notATable: 42 }, 'postgres')
    expect(registry.names()).toEqual(['Item'])
    expect(registry.get('items')?.primaryKey?.autoIncrement).toBe(true)
  })
})

describe('loadSchemaModule', () => {
  it('loads a TypeScript schema at run time', async () => {
    const module = await loadSchemaModule(resolve(root, 'examples/demo/src/schema.ts'))
    expect(createModelRegistry(module, 'postgres').names()).toEqual(
      createModelRegistry(demoSchema, 'postgres').names(),
    )
  })
})
