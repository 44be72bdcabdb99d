-- ids.lua — shared by the wrk scripts: reads the session ids (one a line) from $IDS_FILE and
-- picks one at random per request (each wrk thread has its own generator, seeded by its id).
local M = {}
function M.load()
  local ids = {}
  for line in io.lines(os.getenv("IDS_FILE") or "/tmp/srvbench/ids.txt") do
    if #line > 0 then ids[#ids + 1] = line end
  end
  return ids
end
return M
