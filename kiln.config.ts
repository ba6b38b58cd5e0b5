import { defineConfig } from 'kilnjs'

/** The demo app: every `npx kilnjs …` run from the repository root acts on it. */
export default defineConfig({
  dialect: 'postgres',
  schema: './examples/demo/src/schema.ts',
  out: './examples/demo/src/api',
  migrations: './examples/demo/migrations',
  worker: './examples/demo/src/worker.ts',
  messaging: './examples/demo/src/messaging',
})
