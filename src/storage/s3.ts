import type { Readable } from 'node:stream'
import { importOptional, MissingPackageError } from '../core/optional-package.ts'
import { revealSecret } from '../core/secret.ts'
import {
  type Content,
  type Disk,
  type FileMetadata,
  isByteSource,
  type PutOptions,
  toBuffer,
  toReadable,
  type Visibility,
} from './disk.ts'
import { FileNotFoundError, StorageIoError, StorageUnsupportedError } from './errors.ts'
import { mimeTypeOf } from './mime.ts'
import { encodePath, joinUrl } from './path.ts'
import { uploadParts } from './s3-multipart.ts'
import type { S3DiskOptions } from './s3-options.ts'

type S3Sdk = typeof import('@aws-sdk/client-s3')
type Presigner = typeof import('@aws-sdk/s3-request-presigner')
type S3Client = import('@aws-sdk/client-s3').S3Client

/** Presigned object-store URLs cannot outlive 7 days (SigV4's limit). */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60
const MIN_PART = 5 * 1024 * 1024

/**
 * A disk on an S3-compatible object store. The AWS SDK (`@aws-sdk/client-s3` and
 * `@aws-sdk/s3-request-presigner`, optional dependencies) is loaded on first use only.
 * @example
 * ```ts
 * const media = s3({ bucket: 'media', region: 'eu-central-1', endpoint: process.env.S3_ENDPOINT })
 * const storage = createStorage({ default: 'media', disks: { media: { driver: media } } })
 * ```
 */
export function s3(options: S3DiskOptions): Disk {
  if (!options || typeof options.bucket !== 'string' || options.bucket === '') {
    throw new TypeError('s3({ bucket }): expected the bucket name')
  }
  const partSize = options.partSize ?? 8 * 1024 * 1024
  if (partSize < MIN_PART) throw new TypeError('s3({ partSize }): expected at least 5 MiB')
  return new S3Disk({ ...options, partSize })
}

interface Loaded {
  sdk: S3Sdk
  presigner: Presigner
  client: S3Client
}

class S3Disk implements Disk {
  readonly driver = 's3'
  readonly #options: S3DiskOptions & { partSize: number }
  readonly #prefix: string
  #loaded: Promise<Loaded> | undefined

  constructor(options: S3DiskOptions & { partSize: number }) {
    this.#options = options
    this.#prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '')
  }

  async put(path: string, content: Content, options: PutOptions): Promise<void> {
    const { sdk, client } = await this.#load()
    const base = {
      Bucket: this.#options.bucket,
      Key: this.#key(path),
      ContentType: options.contentType ?? mimeTypeOf(path) ?? 'application/octet-stream',
      ...this.#visibilityFields(options.visibility),
    }
    if (isByteSource(content)) {
      await this.#send(path, 'write', () =>
        client.send(new sdk.PutObjectCommand({ ...base, Body: toBuffer(content) })),
      )
      return
    }
    await this.#putStream(path, toReadable(content), base)
  }

  async get(path: string): Promise<Buffer> {
    const stream = await this.getStream(path)
    const chunks: Buffer[] = []
    try {
      for await (const chunk of stream) chunks.push(chunk as Buffer)
    } catch (error) {
      throw new StorageIoError(`Could not read ${path}`, { cause: error })
    }
    return Buffer.concat(chunks)
  }

  async getStream(path: string): Promise<Readable> {
    const { sdk, client } = await this.#load()
    const result = await this.#send(path, 'read', () =>
      client.send(new sdk.GetObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) })),
    )
    return result.Body as Readable
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.#head(path)
      return true
    } catch (error) {
      if (error instanceof FileNotFoundError) return false
      throw error
    }
  }

  async delete(path: string): Promise<void> {
    const { sdk, client } = await this.#load()
    await this.#send(path, 'delete', () =>
      client.send(
        new sdk.DeleteObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }),
      ),
    )
  }

  async copy(from: string, to: string): Promise<void> {
    const { sdk, client } = await this.#load()
    await this.#send(from, 'copy', () =>
      client.send(
        new sdk.CopyObjectCommand({
          Bucket: this.#options.bucket,
          Key: this.#key(to),
          CopySource: `${this.#options.bucket}/${encodePath(this.#key(from))}`,
        }),
      ),
    )
  }

  async rename(from: string, to: string): Promise<void> {
    await this.copy(from, to)
    await this.delete(from)
  }

  async metadata(path: string): Promise<FileMetadata> {
    const head = await this.#head(path)
    const visibility = head.Metadata?.visibility
    return {
      path,
      size: Number(head.ContentLength ?? 0),
      mimeType: head.ContentType ?? mimeTypeOf(path),
      lastModified: head.LastModified ?? new Date(0),
      ...(visibility === 'public' || visibility === 'private'
        ? { visibility: visibility === 'public' ? ('Public' as const) : ('Private' as const) }
        : {}),
    }
  }

  async files(directory: string, recursive: boolean): Promise<string[]> {
    const { keys } = await this.#list(directory, !recursive)
    return keys.filter((key) => !key.endsWith('/')).sort()
  }

  async directories(directory: string): Promise<string[]> {
    const { prefixes } = await this.#list(directory, true)
    return prefixes.map((prefix) => prefix.replace(/\/$/, '')).sort()
  }

  async makeDirectory(path: string): Promise<void> {
    const { sdk, client } = await this.#load()
    // One empty `dir/` marker per level, as S3 consoles do, so each level lists as a directory.
    const segments = path.split('/')
    for (let i = 1; i <= segments.length; i++) {
      const level = segments.slice(0, i).join('/')
      await this.#send(path, 'create directory', () =>
        client.send(
          new sdk.PutObjectCommand({
            Bucket: this.#options.bucket,
            Key: `${this.#key(level)}/`,
            Body: new Uint8Array(0),
          }),
        ),
      )
    }
  }

  async deleteDirectory(path: string): Promise<void> {
    const { sdk, client } = await this.#load()
    const { keys } = await this.#list(path, false)
    const all = [...keys.map((key) => this.#key(key)), `${this.#key(path)}/`]
    for (let i = 0; i < all.length; i += 1000) {
      const batch = all.slice(i, i + 1000)
      const result = await this.#send(path, 'delete directory', () =>
        client.send(
          new sdk.DeleteObjectsCommand({
            Bucket: this.#options.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      )
      if (result.Errors && result.Errors.length > 0) {
        throw new StorageIoError(`Could not delete directory ${path}`, { cause: result.Errors })
      }
    }
  }

  async temporaryUrl(path: string, expiresInSeconds: number): Promise<string> {
    const { sdk, client, presigner } = await this.#load()
    const expiresIn = Math.min(Math.max(1, Math.floor(expiresInSeconds)), MAX_PRESIGN_SECONDS)
    return presigner.getSignedUrl(
      client,
      new sdk.GetObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }),
      { expiresIn },
    )
  }

  url(path: string): string {
    const key = encodePath(this.#key(path))
    const { endpoint, bucket, region = 'us-east-1', forcePathStyle } = this.#options
    if (!endpoint) return `https://${bucket}.s3.${region}.amazonaws.com/${key}`
    if (forcePathStyle) return joinUrl(endpoint, `${encodeURIComponent(bucket)}/${key}`)
    const url = new URL(endpoint)
    return `${url.protocol}//${bucket}.${url.host}/${key}`
  }

  async close(): Promise<void> {
    if (!this.#loaded) return
    const loaded = await this.#loaded.catch(() => undefined)
    loaded?.client.destroy()
  }

  #key(path: string): string {
    if (this.#prefix === '') return path
    return path === '' ? this.#prefix : `${this.#prefix}/${path}`
  }

  #visibilityFields(visibility: Visibility | undefined) {
    if (visibility === undefined) return {}
    const acl = visibility === 'Public' ? ('public-read' as const) : ('private' as const)
    return {
      Metadata: { visibility: visibility === 'Public' ? 'public' : 'private' },
      ...(this.#options.acl === false ? {} : { ACL: acl }),
    }
  }

  async #head(path: string) {
    const { sdk, client } = await this.#load()
    return this.#send(path, 'read', () =>
      client.send(
        new sdk.HeadObjectCommand({ Bucket: this.#options.bucket, Key: this.#key(path) }),
      ),
    )
  }

  /** Keys (disk-relative) under `directory`; with `shallow`, only one level plus subdirectories. */
  async #list(directory: string, shallow: boolean) {
    const { sdk, client } = await this.#load()
    const rootKey = this.#key(directory)
    const prefix = rootKey === '' ? '' : `${rootKey}/`
    const strip = this.#prefix === '' ? 0 : this.#prefix.length + 1
    const keys: string[] = []
    const prefixes: string[] = []
    let token: string | undefined
    do {
      const page = await this.#send(directory, 'list', () =>
        client.send(
          new sdk.ListObjectsV2Command({
            Bucket: this.#options.bucket,
            Prefix: prefix,
            ContinuationToken: token,
            ...(shallow ? { Delimiter: '/' } : {}),
          }),
        ),
      )
      for (const item of page.Contents ?? []) {
        if (item.Key && item.Key !== prefix) keys.push(item.Key.slice(strip))
      }
      for (const common of page.CommonPrefixes ?? []) {
        if (common.Prefix) prefixes.push(common.Prefix.slice(strip))
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
    return { keys, prefixes }
  }

  /** Uploads a stream of unknown length: one PutObject when small, else a multipart upload. */
  async #putStream(
    path: string,
    stream: Readable,
    base: { Bucket: string; Key: string; ContentType: string; ACL?: 'private' | 'public-read' },
  ): Promise<void> {
    const { sdk, client } = await this.#load()
    const partSize = this.#options.partSize
    const iterator = stream[Symbol.asyncIterator]()
    const nextPart = async (): Promise<Buffer | undefined> => {
      const chunks: Buffer[] = []
      let size = 0
      while (size < partSize) {
        const { value, done } = await iterator.next()
        if (done) break
        const chunk = typeof value === 'string' ? Buffer.from(value) : toBuffer(value)
        chunks.push(chunk)
        size += chunk.length
      }
      return chunks.length === 0 ? undefined : Buffer.concat(chunks)
    }
    let part: Buffer | undefined
    try {
      part = await nextPart()
    } catch (error) {
      throw new StorageIoError(`Could not read the content for ${path}`, { cause: error })
    }
    if (part === undefined || part.length < partSize) {
      const body = part ?? Buffer.alloc(0)
      await this.#send(path, 'write', () =>
        client.send(new sdk.PutObjectCommand({ ...base, Body: body })),
      )
      return
    }
    const created = await this.#send(path, 'write', () =>
      client.send(new sdk.CreateMultipartUploadCommand(base)),
    )
    await uploadParts(
      { sdk, client },
      { ...base, UploadId: created.UploadId! },
      part,
      nextPart,
    ).catch((error: unknown) => {
      throw new StorageIoError(`Could not write ${path}`, { cause: error })
    })
  }

  async #send<T>(path: string, operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (error) {
      const name = (error as { name?: string }).name
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata
        ?.httpStatusCode
      if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) {
        throw new FileNotFoundError(path, { cause: error })
      }
      throw new StorageIoError(`Object store request failed: ${operation} ${path || '(root)'}`, {
        cause: error,
      })
    }
  }

  #load(): Promise<Loaded> {
    this.#loaded ??= loadSdk().then(({ sdk, presigner }) => {
      const {
        region = 'us-east-1',
        endpoint,
        forcePathStyle,
        accessKeyId,
        secretAccessKey,
      } = this.#options
      const client = new sdk.S3Client({
        region,
        ...(endpoint ? { endpoint } : {}),
        forcePathStyle: forcePathStyle ?? false,
        ...(accessKeyId && secretAccessKey
          ? { credentials: { accessKeyId, secretAccessKey: revealSecret(secretAccessKey) } }
          : {}),
        // S3-compatible stores reject the SDK's default CRC checksums on every request.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      })
      return { sdk, presigner, client }
    })
    return this.#loaded
  }
}

async function loadSdk(): Promise<{ sdk: S3Sdk; presigner: Presigner }> {
  try {
    const [sdk, presigner] = await Promise.all([
      importOptional('@aws-sdk/client-s3', 'The S3 disk', () => import('@aws-sdk/client-s3')),
      importOptional(
        '@aws-sdk/s3-request-presigner',
        'The S3 disk',
        () => import('@aws-sdk/s3-request-presigner'),
      ),
    ])
    return { sdk, presigner }
  } catch (error) {
    // Loaded on first use, inside a request: storage's own error answers there.
    if (error instanceof MissingPackageError)
      throw new StorageUnsupportedError(error.message, { cause: error })
    throw error
  }
}
