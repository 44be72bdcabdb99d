-- turn.lua — wrk: agents taking turns. Requests alternate between appending a user message of
-- 30 words (drawn from words of the store built by `mnemo-bench build`) to a conversation and
-- building that conversation's 4096-token context (window strategy, retrieval on by default);
-- the conversations are the first $TURN_SESSIONS session ids (default 64), in rotation.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local ids = require("ids").load()
local k = math.min(tonumber(os.getenv("TURN_SESSIONS") or "64"), #ids)
local words = {"son", "quconpo", "mimian", "memsonququ", "alprogardin", "sonlobrade", "ruionka", "bra",
               "shiquve", "neg", "conpota", "shimemtel", "garkata", "ruthshiex", "debra", "sonnewe",
               "orionproqu", "tagarve", "exentbra", "provepro", "proionexlo", "qumem", "rualshi",
               "kapoan", "pomibrabra", "quankais", "taqu", "dinbrakais", "ismemde", "runeson",
               "telentta", "neposhi", "dinco", "entbraalka", "neormi", "kave", "weve", "almior",
               "shior", "kaordequ", "garbra", "exquex", "pogar", "kathconre", "alrekaru", "shisonmem"}
local n = 0
local context = '{"max_tokens":4096,"strategy":"window"}'
request = function()
  n = n + 1
  local id = ids[(math.floor((n - 1) / 2) % k) + 1]
  if n % 2 == 0 then
    return wrk.format("POST", "/v1/sessions/" .. id .. "/context", {["Content-Type"] = "application/json"}, context)
  end
  local said = {}
  for i = 1, 30 do said[i] = words[math.random(#words)] end
  local body = '{"role":"user","content":"' .. table.concat(said, " ") .. '"}'
  return wrk.format("POST", "/v1/sessions/" .. id .. "/messages", {["Content-Type"] = "application/json"}, body)
end
