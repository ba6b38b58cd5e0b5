import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

/**
 * Embedded PGlite serves one process. While the demo runs, it shares the database on a loopback
 * Postgres socket and records the address in `storage/kiln-db.json`, where kiln's CLI looks when
 * DATABASE_URL is unset — so `npx kilnjs make:api-key ci --save` works in a second terminal.
 */
export async function shareEmbeddedDatabase(
  pglite: PGlite,
  recordPath = 'storage/kiln-db.json',
): Promise<{ url: string; stop(): Promise<void> }> {
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0 })
  await server.start()
  const url = `postgres://postgres@${server.getServerConn()}/postgres`
  mkdirSync(dirname(recordPath), { recursive: true })
  writeFileSync(recordPath, `${JSON.stringify({ url, pid: process.pid }, null, 2)}\n`)
  return {
    url,
    async stop() {
      try {
        const recorded = JSON.parse(readFileSync(recordPath, 'utf8')) as { pid?: number }
        if (recorded.pid === process.pid) rmSync(recordPath, { force: true })
      } catch {
        // Already gone: nothing to clean.
      }
      await server.stop()
    },
  }
}
