import type { Secret } from '../core/secret.ts'

/** Options of `s3`. */
export interface S3DiskOptions {
  bucket: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: Secret | string | undefined
  /** An S3-compatible endpoint (MinIO, DigitalOcean Spaces, R2, …); AWS when omitted. */
  endpoint?: string
  /** Path-style URLs (`endpoint/bucket/key`), needed by most S3-compatible stores. */
  forcePathStyle?: boolean
  /** A key prefix inside the bucket that acts as the disk root. */
  prefix?: string
  /**
   * Send an ACL (`private` / `public-read`) when `putWithOptions` names a visibility. Turn off
   * for buckets with ACLs disabled (AWS's default for new buckets since 2023).
   */
  acl?: boolean
  /** Size of each part of a multipart upload of a stream (at least 5 MiB). */
  partSize?: number
}
