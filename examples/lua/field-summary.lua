-- field-summary.lua: count, min, average and max of every integer field of
-- every printf record, per probe; strings: how many distinct values.
--
-- Run:   sonde app.probe -c ./app --lua examples/lua/field-summary.lua
--        sonde report TRACE_DIR --lua examples/lua/field-summary.lua
-- Needs: a script whose probes printf named values, e.g.
--        printf("latency_ns=%d op=%s\n", ns, op)

local stats = {} -- probe -> field -> {n, min, max, sum} or {distinct = {}}
local texts = 0

function event(ev)
  if ev.text then
    texts = texts + 1
    return
  end
  local per = stats[ev.probe] or {}
  stats[ev.probe] = per
  for name, value in pairs(ev.fields) do
    local s = per[name]
    if math.type(value) == "integer" then
      if not s then
        s = {n = 0, sum = 0, min = value, max = value}
        per[name] = s
      end
      s.n = s.n + 1
      s.sum = s.sum + value
      s.min = math.min(s.min, value)
      s.max = math.max(s.max, value)
    else
      if not s then
        s = {distinct = {}, count = 0}
        per[name] = s
      end
      if not s.distinct[value] then
        s.distinct[value] = true
        s.count = s.count + 1
      end
    end
  end
end

function finish()
  local probes = {}
  for probe in pairs(stats) do probes[#probes + 1] = probe end
  table.sort(probes)
  for _, probe in ipairs(probes) do
    print(probe)
    local names = {}
    for name in pairs(stats[probe]) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local s = stats[probe][name]
      if s.n then
        print(string.format("  %-12s n=%d min=%d avg=%d max=%d", name, s.n, s.min,
                            s.sum // s.n, s.max))
      else
        print(string.format("  %-12s %d distinct strings", name, s.count))
      end
    end
  end
  if texts > 0 then print(string.format("(%d text records)", texts)) end
end
