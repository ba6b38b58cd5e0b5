import { sql } from 'drizzle-orm'
import { integer as pgInteger, pgTable, text as pgText, serial } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  belongsTo,
  createRecordCounter,
  defineListQuery,
  runListQuery,
} from '../../src/api/index.ts'
import { silentLogger } from '../../src/core/index.ts'
import {
  AUTO_EXCLUDED_FIELDS,
  createModelRegistry,
  type Database,
  isCredentialField,
} from '../../src/db/index.ts'
import { createDataTools, createMcpServer, type McpAccessOptions } from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'

/** The credential columns of the issues, beside two that are not credentials. */
const CREDENTIALS = [
  'password_digest',
  'encrypted_password',
  'reset_password_token',
  'otp_secret',
  'access_token',
  'client_secret',
  // Common spellings the net used to miss.
  'passwd',
  'pwd',
  'token_hash',
  'refresh_token_hash',
  'session_key',
  'signing_key',
  'encryption_key',
  'totp_seed',
  'mfa_seed',
  'apikey',
]

const pgAccounts = pgTable('accounts', {
  id: serial('id').primaryKey(),
  name: pgText('name').notNull(),
  tokenCount: pgInteger('token_count').notNull().default(0),
  ...Object.fromEntries(CREDENTIALS.map((name) => [name, pgText(name)])),
})
const pgLogins = pgTable('logins', {
  id: serial('id').primaryKey(),
  accountId: pgInteger('account_id').references(() => pgAccounts.id),
})
const sqliteAccounts = sqliteTable('accounts', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  tokenCount: integer('token_count').notNull().default(0),
  ...Object.fromEntries(CREDENTIALS.map((name) => [name, text(name)])),
})
const sqliteLogins = sqliteTable('logins', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  accountId: integer('account_id').references(() => sqliteAccounts.id),
})

describe('isCredentialField: the one credential rule', () => {
  it('keeps the specification’s eight whole names, any case', () => {
    for (const name of AUTO_EXCLUDED_FIELDS) {
      expect(isCredentialField(name)).toBe(true)
      expect(isCredentialField(name.toUpperCase())).toBe(true)
    }
    expect(isCredentialField('token_count')).toBe(false)
  })

  it('catches names that look like credentials, in snake_case or camelCase', () => {
    const caught = [
      ...CREDENTIALS,
      'passwordDigest',
      'remember_digest',
      'webhook_secret',
      'refresh_token',
      'otp_backup_codes',
      'recovery_codes',
      'jwt_private_key_pem',
      'api_key_hash',
      'encrypted_otp_secret',
      'password_salt',
      'ssh_passphrase',
    ]
    for (const name of caught) expect(isCredentialField(name), name).toBe(true)
    const camel = [
      'userPasswd',
      'tokenHash',
      'refreshTokenHash',
      'signingKey',
      'totpSeed',
      'apiKey',
    ]
    for (const name of [...camel, 'APIKey', 'stripe_api_key', 'mfaSeed', 'sessionKey']) {
      expect(isCredentialField(name), name).toBe(true)
    }
    // Harmless look-alikes stay: a count, a keyboard, a monkey, when a password last changed.
    const harmless = ['token_count', 'keyboard', 'monkey', 'pwd_changed_at', 'key', 'seed']
    for (const name of [...harmless, 'sort_key', 'random_seed', 'tokens_used', 'pwd_reset_at']) {
      expect(isCredentialField(name), name).toBe(false)
    }
    for (const name of ['token_count', 'name', 'email', 'tokens_used', 'api_version', 'digest']) {
      expect(isCredentialField(name), name).toBe(false)
    }
  })

  it('an app marks more fields sensitive, or exposes one by name', () => {
    expect(isCredentialField('ssn', { sensitive: ['ssn'] })).toBe(true)
    expect(isCredentialField(['access_token', 'accessToken'], { expose: ['access_token'] })).toBe(
      false,
    )
    expect(isCredentialField('password', { expose: ['password'], sensitive: ['password'] })).toBe(
      true,
    )
  })
})

describeEachDatabase('credential-looking columns never leave the server', (backend) => {
  let test: TestDatabase
  let database: Database
  let accounts: typeof pgAccounts | typeof sqliteAccounts
  let logins: typeof pgLogins | typeof sqliteLogins
  const counts = createRecordCounter({ ttlMs: 0 })
  const caller = { scopes: ['*'] }

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    const postgres = database.dialect === 'postgres'
    accounts = postgres ? pgAccounts : sqliteAccounts
    logins = postgres ? pgLogins : sqliteLogins
    const id = postgres ? 'serial PRIMARY KEY' : 'integer PRIMARY KEY AUTOINCREMENT'
    const columns = CREDENTIALS.map((name) => `${name} text`).join(', ')
    const ddl = [
      `CREATE TABLE accounts (id ${id}, name text NOT NULL, token_count integer NOT NULL DEFAULT 0, ${columns})`,
      `CREATE TABLE logins (id ${id}, account_id integer REFERENCES accounts(id))`,
      `INSERT INTO accounts (name, token_count, ${CREDENTIALS.join(', ')}) VALUES ('Ada', 3, ${CREDENTIALS.map((c) => `'a-${c}'`).join(', ')})`,
      'INSERT INTO logins (account_id) VALUES (1)',
    ]
    for (const statement of ddl) {
      if (database.dialect === 'postgres') await database.db.execute(sql.raw(statement))
      else database.db.run(sql.raw(statement))
    }
  })
  afterAll(async () => {
    await test?.cleanup()
  })

  const list = (definition: ReturnType<typeof defineListQuery>, query = '') =>
    runListQuery(definition, `/x?${query}`, { db: database.db, counts, caller })

  it('REST lists show none of them by default; token_count stays', async () => {
    const page = await list(defineListQuery(accounts))
    expect(Object.keys(page.data[0]!).sort()).toEqual(['id', 'name', 'token_count'])
  })

  it('REST refuses them in filter (no starts_with oracle), sort and fields', async () => {
    const definition = defineListQuery(accounts)
    for (const query of [
      'filter[otp_secret][starts_with]=a',
      'filter[password_digest]=x',
      'sort=access_token',
      'fields=id,client_secret',
    ]) {
      await expect(list(definition, query), query).rejects.toMatchObject({ status: 422 })
    }
    for (const name of CREDENTIALS) {
      const query = `filter[${name}][starts_with]=a`
      await expect(list(definition, query), query).rejects.toMatchObject({ status: 422 })
      expect(() => defineListQuery(accounts, { fields: ['id', name] })).toThrow(
        `"${name}" is sensitive and cannot be in fields`,
      )
    }
  })

  it('include shows none of them, and an explicit opt-in exposes exactly one', async () => {
    defineListQuery(accounts)
    const viaLogins = defineListQuery(logins, {
      include: { account: belongsTo(accounts, logins.accountId, accounts.id) },
    })
    const page = await list(viaLogins, 'include=account')
    expect(Object.keys(page.data[0]!.account as object).sort()).toEqual([
      'id',
      'name',
      'token_count',
    ])
    defineListQuery(accounts, { expose: ['access_token'] })
    const exposed = await list(viaLogins, 'include=account')
    expect(exposed.data[0]!.account).toEqual({
      id: 1,
      name: 'Ada',
      token_count: 3,
      access_token: 'a-access_token',
    })
    defineListQuery(accounts)
  })

  it('the MCP tools read, filter and write none of them, unless the model exposes one', async () => {
    const models = createModelRegistry({ accounts, logins }, database.dialect)
    const connect = async (access: McpAccessOptions) => {
      const tools = createDataTools({ database, models, access, logger: silentLogger() })
      return connectInMemory(
        createMcpServer({ dataTools: { tools, caller: { scopes: ['mcp:read', 'mcp:write'] } } }),
      )
    }
    const client = await connect({
      models: { accounts: { tools: ['crud_list', 'crud_update'] }, logins: {} },
    })
    const page = await call(client, 'crud_list', { model: 'accounts' })
    expect(Object.keys((page.json as { records: object[] }).records[0]!).sort()).toEqual([
      'id',
      'name',
      'token_count',
    ])
    const oracle = await call(client, 'crud_list', {
      model: 'accounts',
      filters: { otp_secret: { starts_with: 'a' } },
    })
    expect(oracle.isError).toBe(true)
    expect(oracle.text).toMatch(/Unknown filter field\(s\) for accounts: "otp_secret"/)
    for (const name of CREDENTIALS) {
      const guess = await call(client, 'crud_list', {
        model: 'accounts',
        filters: { [name]: { starts_with: 'a' } },
      })
      expect(guess.isError, name).toBe(true)
    }
    const included = await call(client, 'crud_list', { model: 'logins', include: ['account'] })
    const record = (included.json as { records: Array<{ account: object }> }).records[0]!
    expect(Object.keys(record.account).sort()).toEqual(['id', 'name', 'token_count'])
    const write = await call(client, 'crud_update', {
      model: 'accounts',
      id: 1,
      data: { client_secret: 'mine' },
    })
    expect(write.isError).toBe(true)
    await client.close()

    const exposing = await connect({
      models: { accounts: { tools: ['crud_list'], expose: ['access_token'] } },
    })
    const shown = await call(exposing, 'crud_list', { model: 'accounts' })
    expect((shown.json as { records: object[] }).records[0]).toEqual({
      id: 1,
      name: 'Ada',
      token_count: 3,
      access_token: 'a-access_token',
    })
    await exposing.close()
  })
})
