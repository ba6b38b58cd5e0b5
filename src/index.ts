import './core/check-peers.ts'

export { defineConfig, type KilnConfig } from './db/kiln-config.ts'
