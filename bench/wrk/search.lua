-- Search requests: names, trades, typos and prefixes, half of them with a state filter.
local key = os.getenv("VPX_BENCH_KEY")
local words = {"plumbing", "dental", "law", "smith", "garcia", "roofing", "plumbng", "dentl", "landscping",
  "orthodontics", "solar", "consulting", "cardiology", "insurance", "bakery", "pizzeria", "realty",
  "johnson dental", "summit", "heritage law", "pet grooming", "fitness", "salon", "accounting", "hvac",
  "thompson", "rivera", "veterinary", "counseling", "software", "trucking", "staffing", "security", "clinic",
  "fam", "ortho", "elect", "constr", "cafe", "hotel"}
local states = {"CA", "TX", "NY", "FL", "IL", "PA", "OH", "GA", "WA", "CO"}
math.randomseed(os.time())
request = function()
  local q = words[math.random(#words)]:gsub(" ", "%%20")
  local path = "/api/v1/contacts/search?q=" .. q
  if math.random() < 0.5 then
    path = path .. "&state=" .. states[math.random(#states)]
  end
  return wrk.format("GET", path, {["X-API-Key"] = key})
end
