/**
 * Local disk put/get against plain fs/promises writeFile/readFile, 4 KiB and 10 MiB files.
 * The disk does more per call (path checks, a symlink-safe root check, a temporary file and a
 * rename for atomicity); the ratio shows what that costs.
 */
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, local } from 'kilnjs/storage'
import { type BenchOptions, type BenchResult, compare } from './lib.ts'

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-bench-storage-'))
  const storage = createStorage({
    default: 'local',
    disks: { local: { driver: local(join(dir, 'disk')) } },
  })
  const plainDir = join(dir, 'plain', 'files')
  await mkdir(plainDir, { recursive: true })
  const rounds = quick ? 2 : 6
  const durationMs = quick ? 300 : 1_000
  const results: BenchResult[] = []
  try {
    for (const [label, size] of [
      ['4 KiB', 4 * 1024],
      ['10 MiB', 10 * 1024 * 1024],
    ] as const) {
      const content = Buffer.alloc(size, 97)
      const plainPath = join(plainDir, `file-${size}.bin`)
      const diskPath = `files/file-${size}.bin`
      await storage.put(diskPath, content)
      await writeFile(plainPath, content)

      const put = await compare(
        () => storage.put(diskPath, content),
        () => writeFile(plainPath, content),
        { rounds, durationMs },
      )
      results.push({
        name: `local disk put ${label}`,
        baseline: 'fs/promises writeFile',
        ...put,
        notes: 'put is atomic (temporary file + rename); writeFile is not',
      })
      let n = 0
      const atomic = await compare(
        () => storage.put(diskPath, content),
        async () => {
          const temp = join(plainDir, `.tmp-${n++}`)
          await writeFile(temp, content)
          await rename(temp, plainPath)
        },
        { rounds, durationMs },
      )
      results.push({
        name: `local disk put ${label}`,
        baseline: 'writeFile temp + rename',
        ...atomic,
        notes: 'the same atomic replace written by hand: what the checks cost',
      })
      const get = await compare(
        () => storage.get(diskPath),
        () => readFile(plainPath),
        { rounds, durationMs },
      )
      results.push({ name: `local disk get ${label}`, baseline: 'fs/promises readFile', ...get })
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return results
}
