/**
 * `.ci/run`'s PgBouncer: `tsx test/support/pgbouncer-ci.ts <dir> <port> <server URL>` writes
 * the same config the tests use into `<dir>` and starts PgBouncer in the background (`-d`),
 * its pid in `<dir>/pgbouncer.pid`, its log in `<dir>/pgbouncer.log`.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pgbouncerBinary, pgbouncerConfig, pgbouncerUserArgs } from './pgbouncer.ts'

const [dir, port, serverUrl] = process.argv.slice(2)
if (!dir || !port || !serverUrl) {
  console.error('usage: pgbouncer-ci.ts <dir> <port> <server URL>')
  process.exit(2)
}
const user = decodeURIComponent(new URL(serverUrl).username || 'postgres')
writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`)
writeFileSync(
  join(dir, 'pgbouncer.ini'),
  pgbouncerConfig({ serverUrl, port: Number(port), dir, daemon: true }),
)
// The daemon, once it has dropped to the postgres user, writes its pid and log here.
chmodSync(dir, 0o777)
const started = spawnSync(
  pgbouncerBinary,
  ['-d', ...pgbouncerUserArgs(), join(dir, 'pgbouncer.ini')],
  { stdio: 'inherit' },
)
process.exit(started.status ?? 1)
