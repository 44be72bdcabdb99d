-- history.lua — wrk: the last 20 messages of a random session (GET …/messages?tail=true&limit=20).
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local ids = require("ids").load()
request = function()
  return wrk.format("GET", "/v1/sessions/" .. ids[math.random(#ids)] .. "/messages?tail=true&limit=20")
end
