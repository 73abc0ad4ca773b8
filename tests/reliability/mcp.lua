-- wrk script for Quire's load suite: stateless MCP 2026-07-28 tools/call requests, or with
-- `session_mode` (one connection per wrk thread) 2025-11-25 sessions: each connection opens its
-- own session (initialize, notifications/initialized) and sends its calls in it.
-- The runner writes a header defining `bodies` (request bodies to rotate through) and
-- `write_template` (a format string taking thread id and counter, for writes to fresh notes).
-- Every answer that is not HTTP 200 or whose JSON-RPC result is an error counts as an error.
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  errors = 0
  timed_out = 0
  counter = 0
  shown = 0
  -- session_mode: "none" until initialize is answered, then "open" until the notification is
  -- answered, then "ready".
  session_step = "none"
  session_id = nil
  -- Requests already formatted, by their body's index: a fixed body is formatted once, so the
  -- load client, on the same cores as the server, spends its time sending rather than formatting.
  formatted = {}
end

local function session_request()
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["MCP-Protocol-Version"] = "2025-11-25"
  headers["Mcp-Method"] = nil
  if session_step == "none" then
    headers["MCP-Protocol-Version"] = nil
    return wrk.format("POST", nil, headers,
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
      .. '"capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}')
  end
  headers["Mcp-Session-Id"] = session_id
  if session_step == "open" then
    return wrk.format("POST", nil, headers, '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  end
  return nil, headers
end

function request()
  if session_mode then
    local setup, headers = session_request()
    if setup then
      return setup
    end
    counter = counter + 1
    local index = (counter * 7 + id) % #session_bodies + 1
    local ready = formatted[index]
    if not ready then
      ready = wrk.format("POST", nil, headers, session_bodies[index])
      formatted[index] = ready
    end
    return ready
  end
  counter = counter + 1
  -- An entry "WRITE" stands for a write to a fresh note (never the same path twice); "UPDATE"
  -- for a property update of one of `update_paths`, which edits in place and never grows the
  -- vault (what a soak needs to tell a leak from a growing data set).
  local index = (counter * 7 + id) % #bodies + 1
  local body = bodies[index]
  if formatted[index] then
    return formatted[index]
  end
  if body == "WRITE" then
    body = string.format(write_template, id, counter)
  elseif body == "UPDATE" then
    local path = update_paths[(counter * 13 + id) % #update_paths + 1]
    body = string.format(update_template, path, counter)
  end
  -- 2026-07-28 names the method and tool in headers too, and they must match the body.
  local headers = {}
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Mcp-Name"] = body:match('"name":"([^"]+)"')
  local ready = wrk.format("POST", nil, headers, body)
  if body == bodies[index] then
    formatted[index] = ready
  end
  return ready
end

function response(status, headers, body)
  if session_mode and session_step ~= "ready" then
    if session_step == "none" then
      session_id = headers["mcp-session-id"] or headers["Mcp-Session-Id"]
      if status ~= 200 or not session_id then
        errors = errors + 1
        io.stderr:write("initialize failed (HTTP " .. status .. "): " .. body:sub(1, 300) .. "\n")
        return
      end
      session_step = "open"
    elseif status == 202 or status == 200 then
      session_step = "ready"
    else
      errors = errors + 1
    end
    return
  end
  -- A grep that ran out of its time budget answers, but with part of its hits: counted apart.
  if body:find('"timed_out":true', 1, true) then
    timed_out = timed_out + 1
  end
  if status ~= 200 or body:find('"isError":true', 1, true) or body:find('"error":{', 1, true) then
    errors = errors + 1
    if shown < 2 then
      shown = shown + 1
      io.stderr:write("error answer (HTTP " .. status .. "): " .. body:sub(1, 300) .. "\n")
    end
  end
end

function done(summary, latency, requests)
  local failed = 0
  local partial = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("errors")
    partial = partial + thread:get("timed_out")
  end
  failed = failed + summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout
  io.write(string.format("RESULT requests=%d rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d timed_out=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, failed, partial))
end
