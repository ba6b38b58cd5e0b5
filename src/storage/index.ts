import '../core/check-peers.ts'

export { createStorageFromEnv, loadStorageConfig, type StorageConfig } from './config.ts'
export type { Content, Disk, FileMetadata, PutOptions, Visibility } from './disk.ts'
export {
  FileNotFound,
  FileNotFoundError,
  InvalidPath,
  InvalidPathError,
  StorageIo,
  StorageIoError,
  StorageUnsupportedError,
  UnknownDisk,
  UnknownDiskError,
  Unsupported,
} from './errors.ts'
export { local } from './local.ts'
export { type MemoryDiskOptions, memory } from './memory.ts'
export { type PublicDiskRoutesOptions, publicDiskRoutes } from './public-routes.ts'
export { type StorageRoutesOptions, storageRoutes } from './routes.ts'
export { s3 } from './s3.ts'
export type { S3DiskOptions } from './s3-options.ts'
export {
  createStorage,
  type DiskConfig,
  DiskHandle,
  type Expiration,
  Storage,
  type StorageOptions,
  type TemporaryUrlOptions,
} from './storage.ts'
