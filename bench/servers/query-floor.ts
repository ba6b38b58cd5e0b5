/**
 * The floor of the query-grammar benchmark: node:http + pg, hand-written, no authentication,
 * limits, validation, resources or envelope. One route, the query kiln's generated list builds
 * for `filter[author_id]=<n>&sort=-created_at` (the primary key added as the tie-breaker):
 *
 * - `GET /posts?author_id=n` — `select * from posts where author_id = $1
 *   order by created_at desc, id desc limit 20`, rows written as JSON.
 *
 * Run by the benchmarks with `startServer`; DATABASE_URL and KILN_BENCH_POOL (default 10).
 */
import { createServer } from 'node:http'
import pg from 'pg'
import { listen, serverReady, writeJson } from '../http/index.ts'

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.KILN_BENCH_POOL ?? 10),
})
pool.on('error', () => {})

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', 'http://x')
    const author = Number(url.searchParams.get('author_id'))
    const { rows } = await pool.query(
      'select * from posts where author_id = $1 order by created_at desc, id desc limit 20',
      [author],
    )
    writeJson(res, { data: rows })
  } catch {
    res.writeHead(500).end()
  }
})

serverReady({ port: await listen(server) }, () => pool.end())
