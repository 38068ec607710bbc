-- page.lua - wrk script: GET a random 100-entry page (startIndex/count) of 10,000 users.
local token = os.getenv("TOKEN")
wrk.headers["Authorization"] = "Bearer " .. token
math.randomseed(54321)
request = function()
  local start = math.random(1, 9901)
  return wrk.format("GET", string.format("/scim/v2/Users?startIndex=%d&count=100", start))
end
