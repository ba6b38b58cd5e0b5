-- wrk script for kiln's HTTP benchmarks. The requests come ready-made from a file written by
-- bench/http/wrk.ts: "<byte length>\n<raw HTTP/1.1 request>" repeated. Each wrk thread takes
-- every n-th request and sends them in order, starting over when it runs out (counted in
-- `wrapped`: a benchmark that needs every request to be unique treats a wrap as a failure).
-- done() prints one JSON line the runner parses.

local path = os.getenv("KILN_WRK_REQUESTS")
local thread_count = tonumber(os.getenv("KILN_WRK_THREADS") or "1")
-- A pause before each request (ms): each connection then offers a steady rate below the
-- server's capacity instead of the next request the moment the last is answered.
local pause_ms = tonumber(os.getenv("KILN_WRK_PAUSE_MS") or "0")
if pause_ms > 0 then
  function delay()
    return pause_ms
  end
end
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(path, "rb"))
  local data = file:read("*a")
  file:close()
  reqs = {}
  local pos, index = 1, 0
  while pos <= #data do
    local newline = data:find("\n", pos, true)
    local length = tonumber(data:sub(pos, newline - 1))
    if index % thread_count == tid then
      reqs[#reqs + 1] = data:sub(newline + 1, newline + length)
    end
    index = index + 1
    pos = newline + 1 + length
  end
  next_index = 1
  wrapped = 0
end

function request()
  local req = reqs[next_index]
  next_index = next_index + 1
  if next_index > #reqs then
    next_index = 1
    wrapped = wrapped + 1
  end
  return req
end

function done(summary, latency, requests)
  local wraps = 0
  for _, thread in ipairs(threads) do
    wraps = wraps + (thread:get("wrapped") or 0)
  end
  local errors = summary.errors
  io.write(string.format(
    'KILN_WRK {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,' ..
      '"timeout":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f,"wrapped":%d}\n',
    summary.requests, summary.duration, errors.connect, errors.read, errors.write, errors.status,
    errors.timeout, latency:percentile(50), latency:percentile(99), latency.mean, wraps))
end
