-- wrk script of the grab bench (e2e/bench/wrk.ts): POST the URL with a Bearer token from the
-- file $HMDP_TOKENS, rotating per request. A line "<token> <query>" also appends ?<query> to the
-- URL's path for that token's requests (a room sale's grab token: g=<token>). With HMDP_ONCE=1 each token is sent once (thread t
-- takes tokens t, t+T, ...) and the run ends (SIGINT from the runner) once every share is answered.
-- HMDP_BODY, when set, is each request's JSON body (with its Content-Type); HMDP_CLOSE=1 asks for
-- `Connection: close`, so every request is a new connection (wrk reconnects after each answer).
-- HMDP_EXPECT, when set, is text every answer's body must hold: one without it is counted under the
-- status "unexpected" (the run then fails), so a measurement of one answer cannot be of another.
-- done() prints one JSON line: requests, duration, latency percentiles (µs), statuses.
local tokens = {}
local queries = {}
for line in io.lines(os.getenv("HMDP_TOKENS")) do
  local token, query = line:match("^(%S+) (%S+)$")
  tokens[#tokens + 1] = token or line
  queries[#tokens] = query or false
end
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

local body = os.getenv("HMDP_BODY")
if body == "" then
  body = nil
end
local close = os.getenv("HMDP_CLOSE") == "1"
local expect = os.getenv("HMDP_EXPECT")
if expect == "" then
  expect = nil
end

function init(args)
  nthreads = tonumber(os.getenv("HMDP_THREADS")) or 1
  once = os.getenv("HMDP_ONCE") == "1"
  share = math.floor((#tokens - tid + nthreads - 1) / nthreads)
  i = tid
  answered = 0
  statuses = {}
end

function request()
  local k = (i % #tokens) + 1
  i = i + nthreads
  local query = queries[k]
  local headers = { ["Authorization"] = "Bearer " .. tokens[k] }
  if body then
    headers["Content-Type"] = "application/json"
  end
  if close then
    headers["Connection"] = "close"
  end
  return wrk.format("POST", query and (wrk.path .. "?" .. query) or nil, headers, body)
end

function response(status, headers, body)
  local key = tostring(status)
  if expect and not (body and string.find(body, expect, 1, true)) then
    key = "unexpected"
  end
  statuses[key] = (statuses[key] or 0) + 1
  answered = answered + 1
  if once and answered == share then
    -- wrk's main thread sleeps out -d regardless; the runner sends SIGINT once every thread said so.
    io.stderr:write("HMDP_THREAD_DONE\n")
    io.stderr:flush()
  end
end

function done(summary, latency, requests)
  local agg = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do
      agg[k] = (agg[k] or 0) + v
    end
  end
  local parts = {}
  for k, v in pairs(agg) do
    parts[#parts + 1] = string.format('"%s":%d', k, v)
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"errors":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect + e.read + e.write + e.timeout, table.concat(parts, ",")))
end
