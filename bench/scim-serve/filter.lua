-- filter.lua - wrk script: GET one random user of 10,000 by userName filter.
local token = os.getenv("TOKEN")
wrk.headers["Authorization"] = "Bearer " .. token
math.randomseed(12345)
request = function()
  local i = math.random(0, 9999)
  return wrk.format("GET", string.format("/scim/v2/Users?filter=userName%%20eq%%20%%22u%05d%%22", i))
end
