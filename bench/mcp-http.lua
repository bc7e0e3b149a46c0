-- wrk: one stateless 2026-07-28 `tools/call` of `echo` per request, on
-- kept-alive connections; MCP_TOKEN, when set, as a bearer token.
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
local token = os.getenv("MCP_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

-- Every answer must be a success: a benchmark of refusals measures nothing.
local bad = 0
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"isError":false', 1, true) then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  io.write(string.format("non-successes: %d\n", bad))
end
