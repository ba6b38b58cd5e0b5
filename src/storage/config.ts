import { z } from 'zod'
import { ConfigError, type Env, envBoolean, envUrl, parseEnv } from '../core/config/index.ts'
import type { Redactor } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'
import { local } from './local.ts'
import { s3 } from './s3.ts'
import {
  createStorage,
  type DiskConfig,
  type Storage,
  type TemporaryUrlOptions,
} from './storage.ts'

export const storageEnvSchema = z.object({
  FILESYSTEM_DISK: z.string().default('local'),
  FILESYSTEM_LOCAL_ROOT: z.string().default('./storage'),
  FILESYSTEM_LOCAL_URL: z.string().optional(),
  FILESYSTEM_PUBLIC_ROOT: z.string().default('./storage/public'),
  FILESYSTEM_PUBLIC_URL: z.string().default('/storage'),
  OBJSTORE_ACCESS_KEY_ID: z.string().optional(),
  OBJSTORE_SECRET_ACCESS_KEY: z.string().optional(),
  OBJSTORE_DEFAULT_REGION: z.string().default('us-east-1'),
  OBJSTORE_BUCKET: z.string().optional(),
  OBJSTORE_URL: envUrl('expected an absolute http(s) URL', ['http:', 'https:']).optional(),
  /** An S3-compatible endpoint; AWS when unset. */
  OBJSTORE_ENDPOINT: envUrl('expected an absolute http(s) URL', ['http:', 'https:']).optional(),
  OBJSTORE_USE_PATH_STYLE_ENDPOINT: envBoolean.optional(),
  /** The CDN base URL, used by `cdnUrl()` on the public and object-store disks. */
  CDN_URL: envUrl('expected an absolute http(s) URL', ['http:', 'https:']).optional(),
})

/** The storage settings read from the environment by `loadStorageConfig`. */
export interface StorageConfig {
  defaultDisk: string
  local: { root: string; url: string | undefined }
  public: { root: string; url: string }
  /** Present when `OBJSTORE_BUCKET` is set: the `s3` disk. */
  objectStore:
    | {
        bucket: string
        region: string
        accessKeyId: string | undefined
        /** Prints as `<redacted>`; the disk reveals it to the S3 client only. */
        secretAccessKey: Secret | undefined
        url: string | undefined
        endpoint: string | undefined
        forcePathStyle: boolean
      }
    | undefined
  cdnUrl: string | undefined
}

/**
 * Reads the FILESYSTEM_* and OBJSTORE_* variables with their defaults.
 * @example
 * ```ts
 * const { defaultDisk, objectStore } = loadStorageConfig(process.env)
 * ```
 */
export function loadStorageConfig(env: Env = process.env): StorageConfig {
  const parsed = parseEnv(storageEnvSchema, env, 'Invalid storage configuration')
  const config: StorageConfig = {
    defaultDisk: parsed.FILESYSTEM_DISK,
    local: { root: parsed.FILESYSTEM_LOCAL_ROOT, url: parsed.FILESYSTEM_LOCAL_URL },
    public: { root: parsed.FILESYSTEM_PUBLIC_ROOT, url: parsed.FILESYSTEM_PUBLIC_URL },
    objectStore: parsed.OBJSTORE_BUCKET
      ? {
          bucket: parsed.OBJSTORE_BUCKET,
          region: parsed.OBJSTORE_DEFAULT_REGION,
          accessKeyId: parsed.OBJSTORE_ACCESS_KEY_ID,
          secretAccessKey: parsed.OBJSTORE_SECRET_ACCESS_KEY
            ? new Secret(parsed.OBJSTORE_SECRET_ACCESS_KEY)
            : undefined,
          url: parsed.OBJSTORE_URL,
          endpoint: parsed.OBJSTORE_ENDPOINT,
          forcePathStyle: parsed.OBJSTORE_USE_PATH_STYLE_ENDPOINT ?? false,
        }
      : undefined,
    cdnUrl: parsed.CDN_URL,
  }
  const known = ['local', 'public', ...(config.objectStore ? ['s3'] : [])]
  if (!known.includes(config.defaultDisk)) {
    throw new ConfigError(
      {
        FILESYSTEM_DISK:
          config.defaultDisk === 's3'
            ? 'is s3, but OBJSTORE_BUCKET is not set'
            : `expected one of ${known.join(', ')}`,
      },
      'Invalid storage configuration',
    )
  }
  if (
    config.objectStore &&
    !config.objectStore.accessKeyId !== !config.objectStore.secretAccessKey
  ) {
    throw new ConfigError(
      {
        [config.objectStore.accessKeyId ? 'OBJSTORE_SECRET_ACCESS_KEY' : 'OBJSTORE_ACCESS_KEY_ID']:
          'is required when the other object-store key is set',
      },
      'Invalid storage configuration',
    )
  }
  return config
}

/**
 * The storage described by the environment: the `local` and `public` disks, plus the `s3` disk
 * when `OBJSTORE_BUCKET` is set; the default disk from `FILESYSTEM_DISK`.
 * @example
 * ```ts
 * const storage = createStorageFromEnv(process.env)
 * ```
 */
export function createStorageFromEnv(
  env: Env = process.env,
  options: { temporaryUrls?: TemporaryUrlOptions; redactor?: Redactor } = {},
): Storage {
  const config = loadStorageConfig(env)
  // The object-store secret and the URL signing secret never reach a log line.
  options.redactor?.add(config.objectStore?.secretAccessKey, options.temporaryUrls?.secret)
  const disks: Record<string, DiskConfig> = {
    local: {
      driver: local(config.local.root),
      ...(config.local.url ? { url: config.local.url } : {}),
    },
    public: {
      driver: local(config.public.root),
      url: config.public.url,
      ...(config.cdnUrl ? { cdn: config.cdnUrl } : {}),
    },
  }
  const store = config.objectStore
  if (store) {
    disks.s3 = {
      driver: s3({
        bucket: store.bucket,
        region: store.region,
        accessKeyId: store.accessKeyId,
        secretAccessKey: store.secretAccessKey,
        endpoint: store.endpoint,
        forcePathStyle: store.forcePathStyle,
      }),
      ...(store.url ? { url: store.url } : {}),
      ...(config.cdnUrl ? { cdn: config.cdnUrl } : {}),
    }
  }
  return createStorage({
    default: config.defaultDisk,
    disks,
    ...(options.temporaryUrls ? { temporaryUrls: options.temporaryUrls } : {}),
  })
}
