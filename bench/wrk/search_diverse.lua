-- The long tail: each request a word drawn from a list of thousands of the catalogue's own words
-- (written by bench/http_load.py to $VPX_BENCH_WORDS), half of them with a state filter, so that
-- almost every search is one the server has not answered before.
local key = os.getenv("VPX_BENCH_KEY")
local words = {}
for line in io.lines(os.getenv("VPX_BENCH_WORDS")) do
  table.insert(words, line)
end
local states = {"CA", "TX", "NY", "FL", "IL", "PA", "OH", "GA", "WA", "CO"}
math.randomseed(os.time() + 7)
request = function()
  local path = "/api/v1/contacts/search?q=" .. words[math.random(#words)]
  if math.random() < 0.5 then
    path = path .. "&state=" .. states[math.random(#states)]
  end
  return wrk.format("GET", path, {["X-API-Key"] = key})
end
