import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = (capability: string) =>
  fileURLToPath(new URL(`./src/${capability}/index.ts`, import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^kilnjs$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      ...['core', 'db', 'api', 'oauth', 'mcp', 'messaging', 'storage', 'cdn', 'session'].map(
        (name) => ({
          find: `kilnjs/${name}`,
          replacement: src(name),
        }),
      ),
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // A dependency's deprecation is an error in the tests: a new one fails CI instead of
    // printing a warning nobody reads (pg's "client.query() while executing a query" becomes an
    // error in pg 9; this is how it stays gone). kiln's own, KILN_*, are what some tests read.
    setupFiles: ['test/support/deprecations.ts'],
    maxWorkers: 2,
    // Hang guards, not speed checks: embedded Postgres starts slowly on a busy 2-core machine.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
})
