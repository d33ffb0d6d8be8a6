import ast

from mllint.analysis.facets.downloads import Downloads
from mllint.findings import Severity
from mllint.rule import Rule
from mllint.source import one_line

LOADS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url"})


class DownloadedCheckpointUnpickled(Rule):
    """
    ## What it does
    Reports `torch.load(..., weights_only=False)` of a file or stream fetched from the network in the
    same function: the destination of `urllib.request.urlretrieve(url, path)` or
    `torch.hub.download_url_to_file(url, dst)`, what `wget.download` / `gdown.download` return, bytes
    of `requests.get(url).content` or `urllib.request.urlopen(url)`, a file a shell command runs `wget` or
    `curl` to write (`os.system(f"wget {url} -O {dst}")`, `subprocess.run(["curl", url, "-o", dst])`); and
    `torch.hub.load_state_dict_from_url(url, weights_only=False)`, which downloads itself. A file on disk
    loaded with `weights_only=False` is left alone: whether it is trusted is the author's call.

    ## Why is this bad?
    `weights_only=False` unpickles arbitrary Python objects, and unpickling runs whatever code the file's
    author put in it. A checkpoint from a URL someone gives (a `--resume` argument, a config) can execute
    anything on the training machine, under every torch version: saying `False` turns off the safe
    default torch has had since 2.6.

    ## Example
    ```python
    import urllib.request

    import torch


    def resume(model, url, path="last.pt"):
        urllib.request.urlretrieve(url, path)
        state = torch.load(path, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
    ```

    ## Use instead
    ```python
    import urllib.request

    import torch


    def resume(model, url, path="last.pt"):
        urllib.request.urlretrieve(url, path)
        state = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
    ```
    Save checkpoints as state dicts of tensors and plain containers, which `weights_only=True` loads;
    allow other classes one by one with `torch.serialization.add_safe_globals`.

    ## Fix safety
    There is no fix: a checkpoint that holds other Python objects no longer loads with
    `weights_only=True`, and only the author can tell which of them to allow.
    """

    code = "ML807"
    name = "downloaded-checkpoint-unpickled"
    message = "`{load}` unpickles `{source}`, {fetched}, with `weights_only=False`: loading it can run any code its author wrote; load it with `weights_only=True`"
    fetched = "fetched from the network by `{download}` (line {line})"
    severity = Severity.ERROR
    requires_any_text = ("weights_only",)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.ctx.qualified_name(node.func)
        unsafe = any(k.arg == "weights_only" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords)
        if name not in LOADS or not unsafe or not node.args:
            return
        source = node.args[0]
        download = node if name != "torch.load" else self.ctx.analysis(Downloads).downloaded(source)
        if download is not None:
            fetched = "which it downloads" if download is node else self.fetched.format(download=self.ctx.text(download.func), line=download.lineno)
            self.report(node, self.message.format(load=self.ctx.text(node.func), source=one_line(self.ctx.text(source), 50), fetched=fetched))
