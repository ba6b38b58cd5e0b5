import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface TestObjectStore {
  endpoint: string
  bucket: string
  accessKeyId: string
  secretAccessKey: string
  close(): Promise<void>
}

/**
 * An S3-compatible server (s3rver) in a child process on 127.0.0.1, a random port and a fresh
 * temporary directory. It does not check request signatures; tests that care verify them
 * themselves.
 */
export async function startObjectStore(bucket = 'kiln-test'): Promise<TestObjectStore> {
  const directory = await mkdtemp(join(tmpdir(), 'kiln-s3rver-'))
  const script = fileURLToPath(new URL('./s3rver-process.mjs', import.meta.url))
  const child = spawn(process.execPath, [script, directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })
  const [line] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('s3rver exited before listening')
    }),
  ])) as [string]
  const { port } = JSON.parse(line) as { port: number }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    // s3rver's built-in account.
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await once(child, 'exit')
      }
      await rm(directory, { recursive: true, force: true })
    },
  }
}
