-- Shared by the benchmarks' wrk scripts (dofile'd after they set `body`): a new messageId per
-- request (`b<start time>-<thread>-<n>` in place of MESSAGE_ID). The agent answers a repeated
-- messageId from the first send without running it again (idempotent sends), which is not what
-- the benchmarks measure.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local started = os.time()
local n = 0
function request()
  n = n + 1
  local id = string.format("b%d-%d-%d", started, tid or 0, n)
  return wrk.format(nil, nil, nil, (string.gsub(body, "MESSAGE_ID", id)))
end
