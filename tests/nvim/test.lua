-- Neovim 0.7 as a second, independent LSP client of GradGuard.
-- Run: nvim --headless --clean -c "luafile test.lua" train.py
-- Env: GRADGUARD_PYTHON (interpreter with gradguard), GRADGUARD_OUT (file for the fixed text).
-- Prints one "key: value" line per check on stdout; exits 0 on success, 1 (cquit) on failure.

local TIMEOUT_MS = 30000

local function say(key, value)
  io.stdout:write(key .. ": " .. tostring(value) .. "\n")
end

local function fail(message)
  say("FAIL", message)
  vim.cmd("cquit 1")
end

local function check(ok, message)
  if not ok then fail(message) end
end

-- 0.7's vim.diagnostic.get() drops the LSP fields (data, code, source): keep the raw payloads.
local raw = {}
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  raw[result.uri] = { version = result.version, diagnostics = result.diagnostics }
  return publish(err, result, ctx, config)
end

local client_id = vim.lsp.start_client({
  name = "gradguard",
  cmd = { os.getenv("GRADGUARD_PYTHON"), "-m", "gradguard.lsp" },
  root_dir = vim.fn.getcwd(),
  init_options = { select = { "GG101" }, debounceMs = 0 },
})
check(client_id, "the server did not start")
local bufnr = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(bufnr, client_id)
local uri = vim.uri_from_bufnr(bufnr)
local client = vim.lsp.get_client_by_id(client_id)

-- 1. Diagnostics.
check(vim.wait(TIMEOUT_MS, function() return raw[uri] and #raw[uri].diagnostics == 2 end, 20),
  "no GradGuard diagnostics")
say("diagnostics", #raw[uri].diagnostics)
local emoji = raw[uri].diagnostics[2]
say("source", emoji.source)
say("code", emoji.code)
-- Neovim turns the UTF-16 range into byte columns: the squiggle must sit exactly on `loss`.
local placed = vim.diagnostic.get(bufnr)[2]
local line_text = vim.api.nvim_buf_get_lines(bufnr, placed.lnum, placed.lnum + 1, false)[1]
say("squiggled", line_text:sub(placed.col + 1, placed.end_col))

-- 2. Hover on `detach` in `s = "训练😀"; frozen = feat.detach()`.
local row = vim.fn.search("frozen = feat.detach", "n") - 1
local text = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1]
local byte = text:find("detach", 1, true) + 1 -- 0-based byte column, one character into the name
local hover = client.request_sync("textDocument/hover", {
  textDocument = { uri = uri },
  position = { line = row, character = vim.str_utfindex(text, byte) },
}, TIMEOUT_MS, bufnr)
check(hover and hover.result, "no hover")
say("hover", vim.split(hover.result.contents.value, "\n")[1])
for _, line in ipairs(vim.split(hover.result.contents.value, "\n")) do
  if line:find("^%*%*Here:%*%*") then say("hover state", line) end
  if line:find("^| %*%*→%*%*") then say("hover marked", line:match("`([^`]+)`")) end
end

-- 3. Code action for the diagnostic on the emoji line; apply the preferred fix.
local actions = client.request_sync("textDocument/codeAction", {
  textDocument = { uri = uri },
  range = emoji.range,
  context = { diagnostics = { emoji }, only = { "quickfix" } },
}, TIMEOUT_MS, bufnr)
check(actions and actions.result and #actions.result > 0, "no code actions")
local preferred
for _, action in ipairs(actions.result) do
  say("action", action.title)
  if action.isPreferred then preferred = action end
end
check(preferred, "no preferred fix")
vim.lsp.util.apply_workspace_edit(preferred.edit, client.offset_encoding)

-- 4. The edit reaches the server: the fixed finding is gone from the next publish.
local edited = vim.lsp.util.buf_versions[bufnr]
check(vim.wait(TIMEOUT_MS, function() return raw[uri].version == edited end, 20), "no publish after the fix")
say("after fix", #raw[uri].diagnostics)

local out = io.open(os.getenv("GRADGUARD_OUT"), "w")
out:write(table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n")
out:close()

vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
say("done", "ok")
vim.cmd("qall!")
