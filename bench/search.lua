-- wrk script: rotates region search queries (Korean, English, prefixes).
local queries = { "%EC%84%9C%EC%9A%B8", "seoul", "Seo", "%EB%B6%80%EC%82%B0", "jeju", "san", "par", "new", "to", "%EC%A0%9C" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/regions?q=" .. queries[(i % #queries) + 1])
end
