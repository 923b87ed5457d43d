-- csv-writer.lua: every printf record as a CSV row (time, pid, tid, probe,
-- then its fields in format order) in the file $SONDE_CSV (records.csv by
-- default), one header row per format; prints how many rows it wrote.
--
-- Run:   SONDE_CSV=out.csv sonde app.probe -c ./app --lua examples/lua/csv-writer.lua

local path = os.getenv("SONDE_CSV") or "records.csv"
local out
local rows = 0
local headers = {}

local function quote(value)
  local s = tostring(value)
  if s:find('[,"\n]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

function begin()
  out = assert(io.open(path, "w"))
end

function event(ev)
  if ev.text then return end
  if not headers[ev.format] then
    headers[ev.format] = true
    out:write("time_ns,pid,tid,probe,", table.concat(ev.names, ","), "\n")
  end
  local row = {ev.time_ns, ev.pid, ev.tid, quote(ev.probe)}
  for _, value in ipairs(ev.args) do row[#row + 1] = quote(value) end
  out:write(table.concat(row, ","), "\n")
  rows = rows + 1
end

function finish()
  out:close()
  print(string.format("%d rows written to %s", rows, path))
end
