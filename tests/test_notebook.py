"""Jupyter notebooks: code cells linted as one program with IPython syntax skipped, findings reported per
cell in every format, fixes and `# noqa` comments written back into the right cells and nothing else of
the file changed; bad notebooks give one clear finding."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mllint.cli import main
from mllint.engine import Selection, lint_notebook
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.notebook import load
from mllint.registry import all_rules

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks" / "train.ipynb"
# Cell 14's first line in the fixture's JSON (a `%%writefile` cell, not linted, has the same line).
EVAL_LINE, FIXED_EVAL_LINE = '    "model.eval\\n",', '    "model.eval()\\n",'
ML301 = "ML301 `model.eval` is not called: the statement does nothing"
TRAIN_FINDINGS = [
    "cell 8:4:26: ML302 `predict` evaluates `model` in training mode, the module calls it at cell 14, line 7 after "
    "`model.train()` (cell 10, line 2); it has Dropout, `nn.Dropout(0.2)` (cell 7, line 1): call `model.eval()` first",
    "cell 10:7:26: ML101 `probs` is softmax output (cell 10, line 6), but `criterion` applies log_softmax "
    "itself: pass the raw logits",
    f"cell 14:1:1: {ML301} [*]",
]


def notebook(*cells, language: str = "python", **top) -> str:
    """A notebook's JSON text as Jupyter writes it; a cell is a code cell's source (a list of lines or a
    string) or a dict."""
    def cell(value):
        if isinstance(value, dict):
            return value
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": value}

    metadata = {"kernelspec": {"display_name": language, "language": language, "name": language},
                "language_info": {"name": language}}  # fmt: skip
    data = {"cells": [cell(c) for c in cells], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5, **top}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, ["--no-cache", "--isolated", *args], input=input, catch_exceptions=False)


def lint(text: str, *codes: str) -> list[str]:
    findings = lint_notebook(text, "nb.ipynb", Selection.of(codes or all_rules()))
    return [f"cell {f.cell}:{f.start.line}:{f.start.column}: {f.code}" if f.cell else f"{f.code} {f.message}"
            for f in findings]  # fmt: skip


@pytest.fixture
def train(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.ipynb").write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path / "train.ipynb"


# Findings, per cell, in every format.


def test_the_training_notebook_findings_name_their_cells(train):
    result = run("train.ipynb")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:3] == [f"train.ipynb:{line}" for line in TRAIN_FINDINGS]


def test_a_loop_split_over_cells_is_one_program():
    # The loss is defined in one cell, the softmax fed to it in another.
    text = notebook(["import torch.nn as nn\n", "criterion = nn.CrossEntropyLoss()"], markdown("## Train"),
                    ["probs = logits.softmax(dim=1)\n", "loss = criterion(probs, y)"])  # fmt: skip
    assert lint(text) == ["cell 3:2:18: ML101"]


def test_json_reports_the_cell_and_positions_relative_to_it(train):
    [ml101, ml301] = json.loads(run("train.ipynb", "--select", "ML101,ML301", "--output-format", "json").stdout)
    assert (ml101["cell"], ml101["location"]) == (10, {"row": 7, "column": 26})
    assert ml101["end_location"] == {"row": 7, "column": 31}
    assert ml101["fix"]["edits"][0]["location"] == {"row": 6, "column": 17}  # in the cell too
    assert (ml301["cell"], ml301["location"], ml301["noqa_row"]) == (14, {"row": 1, "column": 1}, 1)
    line = json.loads(run("train.ipynb", "--select", "ML101,ML301", "--output-format", "json-lines").stdout.splitlines()[1])
    assert line["cell"] == 14


def test_formats_that_point_at_file_lines_use_the_notebook_files_lines(train):
    json_line = 1 + FIXTURE.read_text().splitlines().index(EVAL_LINE)
    [_, result] = json.loads(run("train.ipynb", "--select", "ML101,ML301", "--output-format", "sarif").stdout)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": json_line, "endLine": json_line}
    assert result["properties"] == {
        "cell": 14, "cellRegion": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 11}
    }  # fmt: skip
    [_, issue] = json.loads(run("train.ipynb", "--select", "ML101,ML301", "--output-format", "gitlab").stdout)
    assert issue["description"] == f"{ML301} (cell 14, line 1, column 1)"
    assert issue["location"] == {"path": "train.ipynb", "lines": {"begin": json_line, "end": json_line}}
    github = run("train.ipynb", "--select", "ML101,ML301", "--output-format", "github").stdout.splitlines()[1]
    assert github == (
        f"::error title=mllint (ML301),file=train.ipynb,line={json_line},endLine={json_line}::"
        f"{ML301} (cell 14, line 1, column 1)"
    )
    assert f"cell 14, line 1, col 1, {ML301[6:]}</failure>" in run("train.ipynb", "--select", "ML101,ML301", "--output-format", "junit").stdout
    pylint = run("train.ipynb", "--select", "ML101,ML301", "--output-format", "pylint").stdout
    assert "train.ipynb:cell 14:1: [ML301(method-not-called), ]" in pylint


def test_full_format_shows_the_cells_line_and_fix(train):
    output = run("train.ipynb", "--output-format", "full", "--select", "ML301").stdout
    assert output.startswith(
        f"train.ipynb:cell 14:1:1: {ML301} [*]\n  |\n1 | model.eval\n  | ^^^^^^^^^^\n  = help: Call `model.eval()`\n"
        "    @@ -1,2 +1,2 @@\n    -model.eval\n    +model.eval()\n     correct = 0\n"
    )


# IPython syntax.


def test_magics_shell_escapes_and_help_are_skipped_keeping_positions():
    text = notebook(
        ["%matplotlib inline\n", "!pip install torch \\\n", "    timm\n", "model?\n", "??model\n", "%time x = 1\n",
         "get_ipython().run_line_magic('load_ext', 'autoreload')\n", "files = !ls\n", "model.eval"],
        ["for i in range(3):\n", "    %time step(i)\n", "    !echo {i}\n", "model.train"],
    )  # fmt: skip
    assert lint(text) == ["cell 1:9:1: ML301", "cell 2:4:1: ML301"]


def test_cell_magics_whose_body_is_not_python_are_not_linted():
    text = notebook(["%%bash\n", "model.eval\n"], ["%%writefile train.py\n", "model.eval\n"],
                    ["%%html\n", "<b>model.eval</b>"], ["%%time\n", "model.eval"])  # fmt: skip
    assert lint(text) == ["cell 4:2:1: ML301"]


def test_percent_and_bang_inside_an_expression_or_a_string_are_python():
    text = notebook(['doc = """\n', "!important\n", '"""\n', "y = (10\n", "     % 3)\n", "model.eval"])
    assert lint(text) == ["cell 1:6:1: ML301"]


def test_a_noqa_comment_in_a_cell_silences_its_line():
    text = notebook(["%matplotlib inline\n", "model.eval  # noqa: ML301\n", "model.train"])
    assert lint(text) == ["cell 1:3:1: ML301"]


def test_a_syntax_error_names_its_cell():
    [finding] = lint_notebook(notebook(["x = 1"], ["def f(:\n", "    pass"]), "nb.ipynb", Selection.of(all_rules()))
    assert (finding.code, finding.cell, finding.start.line) == ("ML002", 2, 1)


# Fixes written back.


def test_fix_changes_only_the_cells_source_and_keeps_the_file_as_it_was(train):
    before = train.read_text(encoding="utf-8")
    result = run("--fix", "train.ipynb")
    assert result.exit_code == 1  # the ML101 finding has an unsafe fix only
    after = train.read_text(encoding="utf-8")
    assert after == before.replace(EVAL_LINE, FIXED_EVAL_LINE, 1)
    assert run("--fix", "train.ipynb").exit_code == 1 and train.read_text(encoding="utf-8") == after  # idempotent


def test_unsafe_fixes_apply_in_the_cell_with_the_finding(train):
    before = train.read_text(encoding="utf-8")
    assert run("--fix", "--unsafe-fixes", "train.ipynb").exit_code == 0
    expected = before.replace(EVAL_LINE, FIXED_EVAL_LINE, 1).replace(
        '"        probs = F.softmax(model(xb), dim=1)\\n"', '"        probs = model(xb)\\n"'
    )
    assert train.read_text(encoding="utf-8") == expected


def test_fix_keeps_a_string_source_a_string_and_the_missing_final_newline(tmp_path):
    path = tmp_path / "nb.ipynb"
    text = notebook("import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval", ["%time model.train"])
    compact = json.dumps(json.loads(text), separators=(",", ":"))  # another writer's layout
    path.write_text(compact)
    run("--fix", str(path))
    assert path.read_text() == compact.replace("model.eval", "model.eval()")


def test_diff_shows_each_changed_cell(train):
    result = run("--diff", "train.ipynb")
    assert result.stdout == (
        "--- a/train.ipynb:cell 14\n+++ b/train.ipynb:cell 14\n@@ -1,4 +1,4 @@\n-model.eval\n+model.eval()\n"
        " correct = 0\n with torch.no_grad():\n     for xb, yb in val_loader:\n"
    )
    assert train.read_text() == FIXTURE.read_text()


def test_add_noqa_writes_the_comments_into_the_cells(train):
    run("--add-noqa", "train.ipynb")
    text = train.read_text(encoding="utf-8")
    assert '"model.eval  # noqa: ML301\\n",' in text
    assert '"        loss = criterion(probs, yb)  # noqa: ML101\\n",' in text
    assert run("train.ipynb").exit_code == 0


def test_a_fix_over_a_cell_boundary_or_an_ipython_line_is_not_offered():
    nb = load(notebook(["a = 1\n", "%time b = 2\n", "c = 3"], ["d = 4"]))
    python = nb.python  # a = 1 / placeholder / c = 3 / boundary / d = 4

    def finding(start: Position, end: Position) -> Finding:
        fix = Fix("edit", (Edit(start, end, "x"),), Applicability.SAFE)
        return Finding("nb.ipynb", start, end, "ML301", "n", "m", Severity.ERROR, fix)

    within = finding(Position(3, 1), Position(3, 2))
    over_boundary = finding(Position(3, 1), Position(5, 2))
    on_magic = finding(Position(2, 1), Position(2, 3))
    before_magic = finding(Position(1, 6), Position(1, 6))  # at the end of the line above: fine
    kept = nb.to_cells([within, over_boundary, on_magic, before_magic], python)
    assert [(f.cell, f.start.line, f.fix is not None) for f in kept] == [
        (1, 1, True), (1, 2, False), (1, 3, True), (1, 3, False)
    ]  # fmt: skip


def test_standard_input_notebook(train):
    text = train.read_text(encoding="utf-8")
    result = run("-", "--stdin-filename", "nb.ipynb", "--select", "ML301", input=text)
    assert result.stdout.splitlines()[0] == f"nb.ipynb:cell 14:1:1: {ML301} [*]"
    fixed = run("-", "--fix", "--stdin-filename", "nb.ipynb", "--select", "ML301", input=text)
    assert fixed.stdout == text.replace(EVAL_LINE, FIXED_EVAL_LINE, 1)


# Cache and baseline.


def test_cached_notebook_findings_keep_their_cells(train):
    first = CliRunner().invoke(main, ["--isolated", "train.ipynb"]).stdout
    assert (train.parent / ".mllint_cache").is_dir()
    assert CliRunner().invoke(main, ["--isolated", "train.ipynb"]).stdout == first
    assert "train.ipynb:cell 14:1:1:" in first


def test_baseline_survives_cells_added_above(train):
    run("--write-baseline", "baseline.json", "train.ipynb")
    data = json.loads(train.read_text())
    data["cells"].insert(0, {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1"]})
    train.write_text(json.dumps(data, indent=1))
    assert run("--baseline", "baseline.json", "train.ipynb").exit_code == 0
    data["cells"].insert(0, {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["model.train"]})
    train.write_text(json.dumps(data, indent=1))
    result = run("--baseline", "baseline.json", "train.ipynb")
    assert result.stdout.splitlines()[0] == (
        "train.ipynb:cell 1:1:1: ML301 `model.train` is not called: the statement does nothing [*]"
    )


# Bad notebooks: one clear finding each, and the rest of the run goes on.


def bad_notebooks(directory: Path) -> dict[str, str]:
    """File name -> what mllint must report for it (None: nothing)."""
    files = {
        "malformed.ipynb": '{"cells": [\n  {"cell_type": "code",}\n]}',
        "not_an_object.ipynb": "[1, 2]",
        "no_cells_key.ipynb": '{"metadata": {}, "nbformat": 4}',
        "bad_source.ipynb": notebook({"cell_type": "code", "metadata": {}, "outputs": [], "source": 42}),
        "r_kernel.ipynb": notebook(["library(ggplot2)\n", "x <- 1"], language="R"),
        "nbformat3.ipynb": json.dumps({"nbformat": 3, "worksheets": [{"cells": []}], "metadata": {}}),
        "huge_code.ipynb": notebook(["x = 1\n"] * 1_000_000),
    }
    for name, text in files.items():
        (directory / name).write_text(text)
    (directory / "invalid_utf8.ipynb").write_bytes(notebook(["x = 1"]).encode().replace(b"x = 1", b"x = \xff"))
    return {
        "malformed.ipynb:2:24: ML001 malformed notebook JSON: Expecting property name enclosed in double quotes",
        "not_an_object.ipynb:1:1: ML001 not a Jupyter notebook: the JSON is not an object",
        "no_cells_key.ipynb:1:1: ML001 not a Jupyter notebook: no `cells` list",
        "bad_source.ipynb:1:1: ML001 cell 1: `source` is neither a string nor a list of strings",
        "r_kernel.ipynb:1:1: ML001 the notebook's language is R, not Python; not linted",
        "nbformat3.ipynb:1:1: ML001 notebook format 3 is not supported (only 4); convert it with "
        "`jupyter nbconvert --to notebook --nbformat 4`",
        "huge_code.ipynb:1:1: ML001 the notebook's code is larger than the 5 MB mllint reads; not linted",
        "invalid_utf8.ipynb:9:10: ML001 cannot decode as utf-8: invalid start byte (byte 0xff)",
    }


def test_every_bad_notebook_gets_one_clear_finding_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = bad_notebooks(Path("."))
    Path("empty.ipynb").write_text(notebook())
    Path("string_sources.ipynb").write_text(notebook("import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval"))
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * 6_000_000}}
    big_outputs = {"cell_type": "code", "metadata": {}, "source": ["x = 1"], "outputs": [image]}
    Path("big_outputs.ipynb").write_text(notebook(big_outputs, ["model.eval"]))
    Path("buggy.py").write_text("model.eval\n")
    result = run(".")
    lines = result.stdout.splitlines()
    assert "Traceback" not in result.output
    for line in expected:
        assert [found for found in lines if found.startswith(line.split(":")[0] + ":")] == [line], result.stdout
    assert f"string_sources.ipynb:cell 1:3:1: {ML301} [*]" in lines
    assert "big_outputs.ipynb:cell 2:1:1: ML301 `model.eval` is not called: the statement does nothing [*]" in lines
    assert "buggy.py:1:1: ML301 `model.eval` is not called: the statement does nothing [*]" in lines
    assert not any(line.startswith("empty.ipynb") for line in lines)


def test_odd_but_valid_notebook_json_is_handled():
    cells = [
        "not a cell",
        {"cell_type": "code", "metadata": "odd", "source": ["model.eval"]},
        {"cell_type": "code", "metadata": {"vscode": "odd"}, "source": "model.eval"},
        {"cell_type": "code", "metadata": {"vscode": {"languageId": "sql"}}, "source": "SELECT 1"},
        {"cell_type": "code", "source": []},
        {"cell_type": "raw", "source": "model.eval"},
    ]
    text = json.dumps({"cells": cells, "metadata": {"language_info": "odd"}, "nbformat": 4, "nbformat_minor": 5})
    assert lint(text) == ["cell 2:1:1: ML301", "cell 3:1:1: ML301"]
