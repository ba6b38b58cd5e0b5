import '../core/check-peers.ts'

export { Secret } from '../core/secret.ts'
export {
  type CdnConfig,
  type CdnProvider,
  type LoadCdnConfigOptions,
  loadCdnConfig,
} from './config.ts'
export { type PurgeAfterDeployOptions, purgeAfterDeploy } from './deploy.ts'
export {
  type FailedBatch,
  InvalidPurgePath,
  InvalidPurgePathError,
  PurgeFailed,
  PurgeFailedError,
} from './errors.ts'
export { type BunnyPurgeOptions, bunnyPurge } from './purge/bunny.ts'
export { type CloudflarePurgeOptions, cloudflarePurge } from './purge/cloudflare.ts'
export { type DigitalOceanPurgeOptions, digitalOceanPurge } from './purge/digitalocean.ts'
export { createPurgeApi } from './purge/index.ts'
export { noPurge } from './purge/none.ts'
export type { PurgeApi, PurgeHttpOptions } from './purge/types.ts'
export { cdnUrl } from './url.ts'
