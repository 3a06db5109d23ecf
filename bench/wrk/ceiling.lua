-- The framework's ceiling: a trivial endpoint of the same app.
request = function()
  return wrk.format("GET", "/healthz")
end
