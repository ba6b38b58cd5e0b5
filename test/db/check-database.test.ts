import { expect, it } from 'vitest'
import { createDemoContext } from '../../examples/demo/src/context.ts'
import { ConfigError } from '../../src/core/index.ts'
import { checkDatabase, createDatabase } from '../../src/db/index.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

async function refusal(url: string): Promise<string> {
  const database = await createDatabase(url, { poolMax: 1 })
  try {
    const error = await checkDatabase(database).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  } finally {
    await database.close()
  }
}

describeEachDatabase('checkDatabase', (backend) => {
  it('passes on a database that answers', async () => {
    const { database, cleanup } = await backend.create()
    try {
      await expect(checkDatabase(database)).resolves.toBeUndefined()
    } finally {
      await cleanup()
    }
  })
})

it.skipIf(!postgresUrl)(
  'names a database that does not exist, and what to do [postgres]',
  async () => {
    const url = new URL(postgresUrl!)
    url.pathname = '/kiln_no_such_database'
    expect(await refusal(url.toString())).toBe(
      'The database cannot be used: DATABASE_URL: database "kiln_no_such_database" does not exist: create it (createdb, or CREATE DATABASE) or correct the name in DATABASE_URL',
    )
  },
)

it('names a server that does not answer', async () => {
  expect(await refusal('postgres://kiln:hunter2@127.0.0.1:1/app')).toMatch(
    /^The database cannot be used: DATABASE_URL: connect ECONNREFUSED 127\.0\.0\.1:1: no PostgreSQL server answers there/,
  )
  expect(await refusal('postgres://kiln:hunter2@127.0.0.1:1/app')).not.toContain('hunter2')
})

it.skipIf(!postgresUrl)(
  'stops the demo before it starts on a missing database [postgres]',
  async () => {
    const url = new URL(postgresUrl!)
    url.pathname = '/kiln_no_such_database'
    await expect(createDemoContext({ databaseUrl: url.toString(), env: {} })).rejects.toThrow(
      /database "kiln_no_such_database" does not exist: create it/,
    )
  },
)
