-- Neovim 0.11 as a second, independent LSP client of GradGuard.
-- Run: nvim --headless -u <config from docs/editors.md> -i NONE --noplugin --cmd "luafile test.lua" train.py
-- (tests/nvim/test_nvim_client.py: `gradguard` on PATH, a gradguard.toml selecting GG101 beside train.py).
-- Env: GRADGUARD_OUT (file for the fixed text), GRADGUARD_FIX_ALL (the page's fix-all command).
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

-- The raw payloads (with their document version), captured before any client starts.
local raw = {}
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  raw[result.uri] = { version = result.version, diagnostics = result.diagnostics }
  return publish(err, result, ctx, config)
end

-- The client is the documented configuration's (docs/editors.md, loaded with `-u`): wait for it
-- to attach to the buffer, after start-up (-c commands and VimEnter run once the file is loaded).
local function run()
local bufnr = vim.api.nvim_get_current_buf()
local client
check(vim.wait(TIMEOUT_MS, function()
  client = vim.lsp.get_clients({ bufnr = bufnr, name = "gradguard" })[1]
  return client ~= nil and client.initialized
end, 20), "the documented configuration attached no gradguard client")
say("client", table.concat(client.config.cmd, " "))
local uri = vim.uri_from_bufnr(bufnr)

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
local hover = client:request_sync("textDocument/hover", {
  textDocument = { uri = uri },
  position = { line = row, character = vim.str_utfindex(text, client.offset_encoding, byte) },
}, TIMEOUT_MS, bufnr)
check(hover and hover.result, "no hover")
say("hover", vim.split(hover.result.contents.value, "\n")[1])
for _, line in ipairs(vim.split(hover.result.contents.value, "\n")) do
  if line:find("^%*%*Here:%*%*") then say("hover state", line) end
  if line:find("^| %*%*→%*%*") then say("hover marked", line:match("`([^`]+)`")) end
end

-- 3. Code action for the diagnostic on the emoji line; apply the preferred fix.
local actions = client:request_sync("textDocument/codeAction", {
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

-- 5. The page's fix-all command (GRADGUARD_FIX_ALL, an Ex command) fixes what is left.
local fixed = vim.lsp.util.buf_versions[bufnr]
vim.cmd(os.getenv("GRADGUARD_FIX_ALL"))
check(vim.wait(TIMEOUT_MS, function()
  return vim.lsp.util.buf_versions[bufnr] ~= fixed and raw[uri].version == vim.lsp.util.buf_versions[bufnr]
end, 20), "the fix-all command changed nothing")
say("after fix-all", #raw[uri].diagnostics)

local out = io.open(os.getenv("GRADGUARD_OUT"), "w")
out:write(table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n")
out:close()

client:stop()
vim.wait(5000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 20)
say("done", "ok")
vim.cmd("qall!")
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    local ok, err = pcall(run)
    if not ok then fail(err) end
  end,
})
