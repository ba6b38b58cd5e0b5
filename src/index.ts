export { defineConfig, type KilnConfig } from './db/kiln-config.ts'
