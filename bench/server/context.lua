-- context.lua — wrk: the 4096-token context of a random session (POST …/context, window strategy).
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local ids = require("ids").load()
local body = '{"max_tokens":4096,"strategy":"window"}'
request = function()
  return wrk.format("POST", "/v1/sessions/" .. ids[math.random(#ids)] .. "/context",
                    {["Content-Type"] = "application/json"}, body)
end
