/** Test services. `.ci/run` sets both; on a laptop without them those suites are skipped. */
export const postgresUrl = process.env.KILN_TEST_DATABASE_URL || undefined
export const redisUrl = process.env.KILN_TEST_REDIS_URL || undefined
/** PgBouncer in transaction mode in front of the test PostgreSQL server (`.ci/run` starts one). */
export const pgbouncerUrl = process.env.KILN_TEST_PGBOUNCER_URL || undefined
export const isCI = process.env.CI === 'true'
