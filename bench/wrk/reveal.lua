-- Reveals of random contacts (a repeat is a free re-reveal, D10), spread over the bench accounts' keys.
local keys = {}
for key in string.gmatch(os.getenv("VPX_BENCH_KEYS") or os.getenv("VPX_BENCH_KEY"), "[^,]+") do
  table.insert(keys, key)
end
local max_id = tonumber(os.getenv("VPX_BENCH_MAX_ID") or "1000000")
math.randomseed(os.time() + 17)
request = function()
  local key = keys[math.random(#keys)]
  return wrk.format("POST", "/api/v1/contacts/ct_" .. math.random(max_id) .. "/reveal", {["X-API-Key"] = key})
end
