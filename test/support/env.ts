/** Test services. `.ci/run` sets both; on a laptop without them those suites are skipped. */
export const postgresUrl = process.env.KILN_TEST_DATABASE_URL || undefined
export const redisUrl = process.env.KILN_TEST_REDIS_URL || undefined
export const isCI = process.env.CI === 'true'
