import { createHash, createHmac } from 'node:crypto'
import { createStorage, s3 } from 'kilnjs/storage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startObjectStore, type TestObjectStore } from './support/s3rver.ts'

/** Recomputes an AWS SigV4 query-string signature (GET, host header only). */
function expectedSignature(url: URL, secretAccessKey: string): string {
  const params = [...url.searchParams.entries()]
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => [rfc3986(key), rfc3986(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&')
  const canonicalRequest = [
    'GET',
    url.pathname,
    params,
    `host:${url.host}\n`,
    url.searchParams.get('X-Amz-SignedHeaders'),
    'UNSIGNED-PAYLOAD',
  ].join('\n')
  const amzDate = url.searchParams.get('X-Amz-Date')!
  const [, date, region, service] = url.searchParams.get('X-Amz-Credential')!.split('/')
  const scope = `${date}/${region}/${service}/aws4_request`
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n')
  let key: Buffer = createHmac('sha256', `AWS4${secretAccessKey}`).update(date!).digest()
  for (const part of [region!, service!, 'aws4_request']) {
    key = createHmac('sha256', key).update(part).digest()
  }
  return createHmac('sha256', key).update(stringToSign).digest('hex')
}

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
}

function amzDateToMs(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate)!
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)
}

describe('S3 disk', () => {
  let store: TestObjectStore

  beforeAll(async () => {
    store = await startObjectStore()
  })
  afterAll(() => store.close())

  const storageFor = (prefix: string) =>
    createStorage({
      default: 's3',
      disks: {
        s3: {
          driver: s3({
            bucket: store.bucket,
            endpoint: store.endpoint,
            forcePathStyle: true,
            region: 'eu-west-1',
            accessKeyId: store.accessKeyId,
            secretAccessKey: store.secretAccessKey,
            prefix,
          }),
        },
      },
    })

  it('presigns temporary URLs with a valid SigV4 signature and the requested expiry', async () => {
    const storage = storageFor('presign')
    await storage.put('reports/q1 2026.txt', 'quarterly')
    const before = Date.now()
    const url = new URL(await storage.temporaryUrl('reports/q1 2026.txt', 900))
    expect(url.origin).toBe(store.endpoint)
    expect(url.pathname).toBe(`/${store.bucket}/presign/reports/q1%202026.txt`)
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256')
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^S3RVER\/\d{8}\/eu-west-1\/s3\/aws4_request$/,
    )
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900')
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host')
    const signedAt = amzDateToMs(url.searchParams.get('X-Amz-Date')!)
    expect(signedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000)
    expect(signedAt).toBeLessThanOrEqual(Date.now() + 1000)
    expect(url.searchParams.get('X-Amz-Signature')).toBe(
      expectedSignature(url, store.secretAccessKey),
    )
    // The verifier is not trivially satisfied: another secret gives another signature.
    expect(expectedSignature(url, 'not-the-secret')).not.toBe(
      url.searchParams.get('X-Amz-Signature'),
    )
    const response = await fetch(url)
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('quarterly')
  })

  it('caps presigned expiry at 7 days and accepts a Date', async () => {
    const storage = storageFor('cap')
    await storage.put('a.txt', 'a')
    const month = new URL(await storage.temporaryUrl('a.txt', 30 * 24 * 3600))
    expect(month.searchParams.get('X-Amz-Expires')).toBe(String(7 * 24 * 3600))
    expect(month.searchParams.get('X-Amz-Signature')).toBe(
      expectedSignature(month, store.secretAccessKey),
    )
    const at = new URL(await storage.temporaryUrl('a.txt', new Date(Date.now() + 120_000)))
    const expires = Number(at.searchParams.get('X-Amz-Expires'))
    expect(expires).toBeGreaterThanOrEqual(118)
    expect(expires).toBeLessThanOrEqual(120)
    await expect(storage.temporaryUrl('a.txt', 0)).rejects.toThrow(TypeError)
    await expect(storage.temporaryUrl('a.txt', new Date(Date.now() - 1000))).rejects.toThrow(
      TypeError,
    )
  })

  it('builds object URLs without a URL base: path style, virtual-host style, AWS', () => {
    const pathStyle = s3({
      bucket: 'media',
      endpoint: 'https://store.example.com',
      forcePathStyle: true,
    })
    expect(pathStyle.url!('a/b c.png')).toBe('https://store.example.com/media/a/b%20c.png')
    const vhost = s3({ bucket: 'media', endpoint: 'https://store.example.com' })
    expect(vhost.url!('a.png')).toBe('https://media.store.example.com/a.png')
    const aws = s3({ bucket: 'media', region: 'eu-central-1', prefix: 'app' })
    expect(aws.url!('a.png')).toBe('https://media.s3.eu-central-1.amazonaws.com/app/a.png')
  })

  it('uploads a stream larger than one part as a multipart upload', async () => {
    const storage = createStorage({
      default: 's3',
      disks: {
        s3: {
          driver: s3({
            bucket: store.bucket,
            endpoint: store.endpoint,
            forcePathStyle: true,
            accessKeyId: store.accessKeyId,
            secretAccessKey: store.secretAccessKey,
            prefix: 'multipart',
            partSize: 5 * 1024 * 1024,
          }),
        },
      },
    })
    const parts = [
      Buffer.alloc(3 * 1024 * 1024, 1),
      Buffer.alloc(4 * 1024 * 1024, 2),
      Buffer.alloc(10, 3),
    ]
    await storage.put(
      'big.bin',
      (async function* () {
        yield* parts
      })(),
    )
    const stored = await storage.get('big.bin')
    expect(stored.equals(Buffer.concat(parts))).toBe(true)
    expect((await storage.metadata('big.bin')).mimeType).toBe('application/octet-stream')
  })

  it('turns an unreachable store into StorageIoError, not a crash', async () => {
    const storage = createStorage({
      default: 's3',
      disks: {
        s3: {
          driver: s3({
            bucket: 'b',
            endpoint: 'http://127.0.0.1:9',
            forcePathStyle: true,
            accessKeyId: 'x',
            secretAccessKey: 'y',
          }),
        },
      },
    })
    const error = (await storage.get('a.txt').catch((e: unknown) => e)) as {
      code: string
      status: number
    }
    expect(error.code).toBe('storage_io')
    expect(error.status).toBe(500)
  })

  it('refuses misconfiguration when the disk is created', () => {
    expect(() => s3({ bucket: '' })).toThrow(TypeError)
    expect(() => s3({ bucket: 'b', partSize: 1024 })).toThrow(TypeError)
  })
})
