import './core/check-peers.ts'

export { type LoadedKilnConfig, loadKilnConfig, loadModelRegistry } from './cli/models/load.ts'
export { defineConfig, type KilnConfig } from './db/kiln-config.ts'
