"""The language server in a real Neovim, headless (skipped where `nvim` is not installed; CI installs it):
settings from `init_options`, the cross-file quick fix applied as Neovim applies a workspace edit, the
quick-fix titles, and the hover's documentation without a dead link."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim is not installed")
MLLINT = str(Path(sys.executable).parent / "mllint")

# Neovim 0.7 and later: `vim.lsp.start_client` (0.8's `vim.lsp.start` is not in Debian 12's 0.7).
SCRIPT = """
local out = {}
vim.cmd("edit engine.py")
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = "mllint", cmd = { os.getenv("MLLINT"), "server" }, root_dir = vim.fn.getcwd(),
  init_options = { mllint = { extendSelect = { "ML801" } } },
})
vim.lsp.buf_attach_client(buf, id)
vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 2 end, 50)
out.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do table.insert(out.diagnostics, { d.lnum, d.code }) end
local params = vim.lsp.util.make_range_params()
params.range = { start = { line = 5, character = 0 }, ["end"] = { line = 5, character = 0 } }
params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, 5), only = { "quickfix" } }
out.titles = {}
for _, response in pairs(vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000) or {}) do
  for _, action in ipairs(response.result or {}) do
    table.insert(out.titles, action.title)
    if action.edit and action.title:find("Remove the softmax") then
      vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
    end
  end
end
local hover = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 7, character = 17 } }
for _, response in pairs(vim.lsp.buf_request_sync(buf, "textDocument/hover", hover, 10000) or {}) do
  out.hover = response.result and response.result.contents.value
end
vim.cmd("silent! wall")
local file = io.open(os.getenv("OUT"), "w")
file:write(vim.fn.json_encode(out))
file:close()
vim.cmd("qa!")
"""
MODELS = """import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1)
"""
ENGINE = """import torch
from torch import nn

from models import Net

loss = nn.CrossEntropyLoss()(Net()(1), 0)
state = torch.load("m.pt")
x = 1  # noqa: ML301
"""


def test_neovim_takes_settings_applies_the_cross_file_fix_and_hovers(tmp_path):
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "engine.py").write_text(ENGINE)
    (tmp_path / "test.lua").write_text(SCRIPT)
    output = tmp_path / "out.json"
    env = {**os.environ, "MLLINT": MLLINT, "OUT": str(output)}
    env.pop("MLLINT_DOCS_URL", None)
    subprocess.run([NVIM, "--headless", "-u", "NONE", "-c", "luafile test.lua"], cwd=tmp_path, env=env, timeout=120, check=True, capture_output=True)
    out = json.loads(output.read_text())
    assert sorted(map(tuple, out["diagnostics"])) == [(5, "ML101"), (6, "ML801"), (7, "ML003")]  # ML801: only by init_options
    assert out["titles"] == ["mllint (ML101): Remove the softmax: pass the logits (in models.py) (unsafe fix)", "mllint (ML101): Disable for this line"]
    assert (tmp_path / "models.py").read_text() == MODELS.replace("F.softmax(x, dim=1)", "x")
    assert (tmp_path / "engine.py").read_text() == ENGINE
    assert out["hover"].startswith("**ML301** `method-not-called`\n\n## What it does")
