import type { S3Client } from '@aws-sdk/client-s3'

type S3Sdk = typeof import('@aws-sdk/client-s3')

/** The multipart upload a stream is written through once it is larger than one part. */
export interface MultipartUpload {
  Bucket: string
  Key: string
  UploadId: string
}

/**
 * Uploads `first` and every part `next` reads (until it answers `undefined`), then completes
 * the upload. On any failure the upload is aborted, so the store keeps no orphaned parts (which
 * it would bill for), and the error is rethrown.
 */
export async function uploadParts(
  { sdk, client }: { sdk: S3Sdk; client: S3Client },
  upload: MultipartUpload,
  first: Buffer,
  next: () => Promise<Buffer | undefined>,
): Promise<void> {
  const { Bucket, Key, UploadId } = upload
  const parts: { ETag: string; PartNumber: number }[] = []
  try {
    for (let part: Buffer | undefined = first; part !== undefined; part = await next()) {
      const PartNumber = parts.length + 1
      const uploaded = await client.send(
        new sdk.UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: part }),
      )
      parts.push({ ETag: uploaded.ETag!, PartNumber })
    }
    await client.send(
      new sdk.CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    )
  } catch (error) {
    await client
      .send(new sdk.AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
      .catch(() => {})
    throw error
  }
}
