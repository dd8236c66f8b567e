-- Drives `lifeguard lsp` with Neovim's built-in LSP client, headless,
-- started by docs/editors.md's init.lua for the file on the command line
-- ($LG_FILE): waits for the
-- diagnostics, applies the file's quick fix through Neovim's own
-- workspace-edit code, writes the file, and records the
-- diagnostics as JSON in $LG_OUT. Exits 0 when done, 1 otherwise.
--
-- LG_FILE=... LG_OUT=... nvim --headless -n -i NONE -u init.lua FILE -c 'luafile neovim.lua'
local file, out = os.getenv('LG_FILE'), os.getenv('LG_OUT')

local function finish(code, message)
  if message then
    io.stderr:write('neovim.lua: ' .. message .. '\n')
  end
  vim.cmd((code == 0) and 'qall!' or 'cquit! ' .. code)
end

local ok, err = pcall(function()
  -- The buffer was opened on the command line; docs/editors.md's init.lua
  -- attached the server to it.
  local bufnr = vim.api.nvim_get_current_buf()
  local client
  assert(
    vim.wait(20000, function()
      for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
        if c.name == 'lifeguard' then
          client = c
        end
      end
      return client ~= nil
    end, 20),
    'the init.lua did not attach lifeguard to ' .. file
  )
  assert(
    vim.wait(20000, function()
      return #vim.diagnostic.get(bufnr) > 0
    end, 20),
    'no diagnostics within 20 s'
  )
  local recorded = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = (d.user_data or {}).lsp or {}
    -- Neovim keeps positions as lnum/col (0-based; the file is ASCII, so
    -- bytes are UTF-16 units) and the rest of the LSP diagnostic in user_data.
    table.insert(recorded, {
      code = lsp.code or d.code,
      severity = d.severity,
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum, character = d.end_col },
      },
    })
  end
  -- The quick fixes, asked for while the text is as the diagnostics saw it.
  local fixes = {}
  for _, d in ipairs(recorded) do
    local params = {
      textDocument = vim.lsp.util.make_text_document_params(bufnr),
      range = d.range,
      context = { diagnostics = { { range = d.range, code = d.code, severity = d.severity, message = '' } }, only = { 'quickfix' } },
    }
    local answer = client.request_sync('textDocument/codeAction', params, 10000, bufnr)
    for _, action in ipairs((answer and answer.result) or {}) do
      if action.isPreferred then
        table.insert(fixes, action.edit)
      end
    end
  end
  -- Each was worked out against the text as the diagnostics saw it: the
  -- file's only quick fix is applied.
  if #fixes == 1 then
    vim.lsp.util.apply_workspace_edit(fixes[1], client.offset_encoding or 'utf-16')
  end
  vim.cmd('write')
  local handle = assert(io.open(out, 'w'))
  handle:write(vim.fn.json_encode({ diagnostics = recorded, fixes = #fixes }))
  handle:close()
  client.stop()
end)
if ok then
  finish(0)
else
  finish(1, tostring(err))
end
