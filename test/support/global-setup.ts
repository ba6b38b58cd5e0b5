import { Redis } from 'ioredis'
import pg from 'pg'
import { isCI, pgbouncerUrl, postgresUrl, redisUrl } from './env.ts'

/**
 * Checks the test services once before any suite runs. Under CI=true a missing or unreachable
 * service fails the run; elsewhere the suites that need it are skipped, said in one line.
 */
export default async function setup(): Promise<void> {
  const problems: string[] = []
  if (postgresUrl) {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5_000 })
    try {
      await client.connect()
      await client.query('select 1')
    } catch (error) {
      problems.push(
        `PostgreSQL at KILN_TEST_DATABASE_URL is unreachable (${(error as Error).message})`,
      )
    } finally {
      await client.end().catch(() => {})
    }
  } else if (isCI) {
    problems.push('KILN_TEST_DATABASE_URL is not set')
  }
  if (pgbouncerUrl) {
    const client = new pg.Client({ connectionString: pgbouncerUrl, connectionTimeoutMillis: 5_000 })
    try {
      await client.connect()
      await client.query('select 1')
    } catch (error) {
      problems.push(
        `PgBouncer at KILN_TEST_PGBOUNCER_URL is unreachable (${(error as Error).message})`,
      )
    } finally {
      await client.end().catch(() => {})
    }
  }
  if (redisUrl) {
    const redis = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 5_000,
    })
    redis.on('error', () => {})
    try {
      await redis.connect()
      await redis.ping()
    } catch (error) {
      problems.push(`Redis at KILN_TEST_REDIS_URL is unreachable (${(error as Error).message})`)
    } finally {
      redis.disconnect()
    }
  } else if (isCI) {
    problems.push('KILN_TEST_REDIS_URL is not set')
  }
  if (problems.length > 0) {
    if (isCI) throw new Error(`CI=true needs every test service:\n  ${problems.join('\n  ')}`)
    console.warn(`kiln tests: ${problems.join('; ')}`)
  }
  const skipped = [
    !postgresUrl && 'PostgreSQL (set KILN_TEST_DATABASE_URL)',
    !redisUrl && 'Redis (set KILN_TEST_REDIS_URL)',
    postgresUrl && !pgbouncerUrl && 'PgBouncer (set KILN_TEST_PGBOUNCER_URL, as .ci/run does)',
  ]
    .filter(Boolean)
    .join(' and ')
  if (skipped) console.warn(`kiln tests: suites needing ${skipped} are skipped.`)
}
