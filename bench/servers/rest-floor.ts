/**
 * The floor for the REST benchmarks: node:http + pg, the same SQL as the generated API, rows
 * written as JSON. No authentication, limits, validation, resources or envelope.
 *
 * - `GET /posts/:id` — `select * from posts where id = $1` (`?prepared=1`: a named statement);
 * - `GET /posts?page=n` — one page of 20, no count;
 * - `GET /posts?page=n&count=1` — the page and `count(*)`, as a total paid per request costs.
 *
 * Run by the benchmarks with `startServer`; DATABASE_URL and KILN_BENCH_POOL (default 10).
 */
import { createServer } from 'node:http'
import pg from 'pg'
import { listen, serverReady, writeJson } from '../http/index.ts'

const PER_PAGE = 20
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.KILN_BENCH_POOL ?? 10),
})
pool.on('error', () => {})

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', 'http://x')
    const one = /^\/posts\/(\d+)$/.exec(url.pathname)
    let body: unknown
    if (one) {
      const query = { text: 'select * from posts where id = $1', values: [Number(one[1])] }
      const named = url.searchParams.has('prepared') ? { name: 'floor_show' } : {}
      const { rows } = await pool.query({ ...query, ...named })
      body = { data: rows[0] }
    } else {
      const page = Number(url.searchParams.get('page') ?? 1)
      const list = pool.query(`select * from posts order by id limit ${PER_PAGE} offset $1`, [
        (page - 1) * PER_PAGE,
      ])
      if (url.searchParams.has('count')) {
        const [{ rows }, count] = await Promise.all([
          list,
          pool.query('select count(*)::int as total from posts'),
        ])
        body = { data: rows, total: count.rows[0]?.total }
      } else {
        body = { data: (await list).rows }
      }
    }
    writeJson(res, body)
  } catch {
    res.writeHead(500).end()
  }
})

serverReady({ port: await listen(server) }, () => pool.end())
