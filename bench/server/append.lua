-- append.lua — wrk: POST one user message (about 200 bytes) to a random session of the store.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local ids = require("ids").load()
local n = 0
local body = '{"role":"user","content":"' .. string.rep("lorem ipsum ", 16) .. '"}'
request = function()
  n = n + 1
  local id = ids[math.random(#ids)]
  return wrk.format("POST", "/v1/sessions/" .. id .. "/messages", {["Content-Type"] = "application/json"}, body)
end
