"""Configuration: `[tool.mllint]` in `pyproject.toml` or an `mllint.toml`; each file uses the closest one
above it, `extend` inherits explicitly, bad keys and values are errors naming the file and the key."""
import os
from pathlib import Path

import pytest

from mllint.config import SCHEMA, ConfigError, Resolver
from mllint.findings import Severity
from mllint.registry import all_rules
from mllint.runner import Job, check_path

BUGGY = "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.eval\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def settings(path: Path, **overrides):
    return Resolver(overrides).settings_for(str(path))


def config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as error:
        settings(path)
    return str(error.value)


# Which file.


def test_without_any_configuration_the_defaults_apply(tmp_path):
    write(tmp_path / "a.py", "")
    found = settings(tmp_path / "a.py")
    assert found.source is None
    assert found.select == ("ML",)
    assert found.fail_on is Severity.INFO
    assert found.respect_gitignore is True


def test_closest_configuration_above_the_file_wins(tmp_path):
    outer = write(tmp_path / "pyproject.toml", '[tool.mllint]\nselect = ["ML0"]\n')
    inner = write(tmp_path / "pkg" / "mllint.toml", 'select = ["ML3"]\n')
    deeper = write(tmp_path / "pkg" / "sub" / "deeper" / "pyproject.toml", '[tool.mllint]\nignore = ["ML301"]\n')
    assert settings(tmp_path / "a.py").source == outer
    assert settings(tmp_path / "pkg" / "b.py").source == inner
    assert settings(tmp_path / "pkg" / "sub" / "c.py").source == inner
    assert settings(tmp_path / "pkg" / "sub" / "deeper" / "d.py").source == deeper
    assert settings(tmp_path / "pkg" / "b.py").select == ("ML3",)
    assert settings(tmp_path / "pkg" / "sub" / "deeper" / "d.py").select == ("ML",)


def test_settings_of_a_directory_come_from_its_own_configuration(tmp_path):
    inner = write(tmp_path / "pkg" / "mllint.toml", 'select = ["ML3"]\n')
    write(tmp_path / "pyproject.toml", '[tool.mllint]\nselect = ["ML0"]\n')
    assert settings(tmp_path / "pkg").source == inner


def test_pyproject_without_a_mllint_table_is_skipped(tmp_path):
    outer = write(tmp_path / "mllint.toml", 'select = ["ML3"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "pkg"\n\n[tool.black]\nline-length = 100\n')
    assert settings(tmp_path / "pkg" / "a.py").source == outer


def test_mllint_toml_wins_over_pyproject_in_the_same_directory(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.mllint]\nselect = ["ML0"]\n')
    mllint_toml = write(tmp_path / "mllint.toml", 'select = ["ML3"]\n')
    found = settings(tmp_path / "a.py")
    assert (found.source, found.select) == (mllint_toml, ("ML3",))


def test_an_empty_mllint_toml_counts_as_a_configuration(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.mllint]\nselect = ["ML0"]\n')
    empty = write(tmp_path / "pkg" / "mllint.toml", "")
    found = settings(tmp_path / "pkg" / "a.py")
    assert (found.source, found.select) == (empty, ("ML",))


def test_the_root_is_the_directory_of_the_configuration_file(tmp_path):
    write(tmp_path / "proj" / "mllint.toml", "")
    assert settings(tmp_path / "proj" / "src" / "a.py").root == tmp_path / "proj"


def test_explicit_configuration_file_is_used_for_every_path(tmp_path):
    chosen = write(tmp_path / "conf" / "strict.toml", 'fail-on = "error"\n')
    write(tmp_path / "src" / "mllint.toml", 'fail-on = "info"\n')
    found = Resolver({}, config_file=chosen).settings_for(str(tmp_path / "src" / "a.py"))
    assert (found.source, found.fail_on, found.root) == (chosen, Severity.ERROR, tmp_path / "conf")


def test_isolated_ignores_configuration_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "mllint.toml", 'select = ["ML3"]\n')
    found = Resolver({}, isolated=True).settings_for(str(tmp_path / "a.py"))
    assert (found.source, found.select, found.root) == (None, ("ML",), tmp_path)


def test_command_line_overrides_replace_file_values(tmp_path):
    write(tmp_path / "mllint.toml", 'select = ["ML3"]\nfail-on = "warning"\n')
    found = settings(tmp_path / "a.py", fail_on=Severity.ERROR)
    assert (found.select, found.fail_on) == (("ML3",), Severity.ERROR)


# extend


def test_extend_inherits_and_overrides(tmp_path):
    write(tmp_path / "base.toml", 'select = ["ML3"]\nfail-on = "warning"\nextend-exclude = ["old"]\n')
    child = write(tmp_path / "pkg" / "mllint.toml", 'extend = "../base.toml"\nfail-on = "error"\n')
    found = settings(tmp_path / "pkg" / "a.py")
    assert found.source == child
    assert found.select == ("ML3",)  # inherited
    assert found.extend_exclude == ("old",)  # inherited
    assert found.fail_on is Severity.ERROR  # overridden
    assert found.root == tmp_path / "pkg"  # patterns stay relative to the extending file


def test_extend_a_pyproject_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.mllint]\nignore = ["ML301"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[tool.mllint]\nextend = "../pyproject.toml"\nfail-on = "error"\n')
    found = settings(tmp_path / "pkg" / "a.py")
    assert (found.ignore, found.fail_on) == (("ML301",), Severity.ERROR)


def test_extend_chain_of_three(tmp_path):
    write(tmp_path / "a.toml", 'select = ["ML0"]\nignore = ["ML003"]\n')
    write(tmp_path / "b.toml", 'extend = "a.toml"\nselect = ["ML3"]\n')
    write(tmp_path / "pkg" / "mllint.toml", 'extend = "../b.toml"\nfail-on = "warning"\n')
    found = settings(tmp_path / "pkg" / "x.py")
    assert (found.select, found.ignore, found.fail_on) == (("ML3",), ("ML003",), Severity.WARNING)


def test_extend_cycle_is_an_error(tmp_path):
    first = write(tmp_path / "mllint.toml", 'extend = "other/mllint.toml"\n')
    second = write(tmp_path / "other" / "mllint.toml", 'extend = "../mllint.toml"\n')
    first, second = first.resolve(), second.resolve()
    assert config_error(tmp_path / "a.py") == f"{first}: `extend` cycle: {first} -> {second} -> {first}"


def test_extend_of_itself_is_an_error(tmp_path):
    path = write(tmp_path / "mllint.toml", 'extend = "mllint.toml"\n').resolve()
    assert config_error(tmp_path / "a.py") == f"{path}: `extend` cycle: {path} -> {path}"


def test_extend_of_a_missing_file_is_an_error_naming_it(tmp_path):
    write(tmp_path / "mllint.toml", 'extend = "missing.toml"\n')
    missing = (tmp_path / "missing.toml").resolve()
    assert config_error(tmp_path / "a.py") == f"{missing}: cannot read: No such file or directory"


def test_extend_of_a_pyproject_without_table_is_an_error(tmp_path):
    write(tmp_path / "base" / "pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path / "mllint.toml", 'extend = "base/pyproject.toml"\n')
    base = (tmp_path / "base" / "pyproject.toml").resolve()
    assert config_error(tmp_path / "a.py") == f"{base}: no [tool.mllint] table"


# Bad files, keys and values.


def test_malformed_toml_is_an_error_naming_the_file(tmp_path):
    path = write(tmp_path / "pyproject.toml", "[tool.mllint\nselect = \n")
    message = config_error(tmp_path / "a.py")
    # The parser's own words vary with the Python version (tomllib, or tomli before 3.11).
    assert message.startswith(f"{path}:1:13: invalid TOML: ")  # the line and column the parser stopped at
    assert "(at line" not in message


def test_pyproject_with_a_non_table_tool_is_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", "tool = 1\n")
    assert settings(tmp_path / "a.py").source is None


def test_pyproject_with_a_non_table_tool_mllint_is_an_error(tmp_path):
    path = write(tmp_path / "pyproject.toml", "[tool]\nmllint = 3\n")
    assert config_error(tmp_path / "a.py") == f"{path}: `tool.mllint`: expected a table"


def test_unknown_key_is_an_error_naming_file_and_key(tmp_path):
    path = write(tmp_path / "pyproject.toml", '[tool.mllint]\nselct = ["ML3"]\n').resolve()
    assert config_error(tmp_path / "a.py") == (
        f"{path}:2:1: unknown key `tool.mllint.selct` (did you mean `select`?); the keys are extend, select, "
        "extend-select, ignore, per-file-ignores, unfixable, exclude, extend-exclude, respect-gitignore, "
        "force-exclude, fail-on, severity, analysis-budget"
    )


def test_unknown_key_without_a_close_one_lists_the_keys(tmp_path):
    path = write(tmp_path / "mllint.toml", "colour = 1\n").resolve()
    assert config_error(tmp_path / "a.py").startswith(f"{path}:1:1: unknown key `colour`; the keys are extend, select, ")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("select = 3", "`select`: expected an array of strings, got an integer"),
        ('select = "ML1"', "`select`: expected an array of strings, got a string ('ML1')"),
        ('select = ["ML3", 1]', "`select`: expected an array of strings, got an array holding an integer"),
        ('unfixable = "ML301"', "`unfixable`: expected an array of strings, got a string ('ML301')"),
        ('unfixable = ["ML3O1"]', "`unfixable`: unknown rule selector: ML3O1"),
        ('select = ["ML999"]', "`select`: unknown rule selector: ML999"),
        ('extend-select = ["XY"]', "`extend-select`: unknown rule selector: XY"),
        ('ignore = [["ML3"]]', "`ignore`: expected an array of strings, got an array holding an array"),
        ('per-file-ignores = ["tests/*"]', "`per-file-ignores`: expected a table of glob = [codes], got an array"),
        ('per-file-ignores = { "tests/*" = 3 }', "`per-file-ignores`.tests/*: expected an array of strings, got an integer"),
        ('per-file-ignores = { "tests/*" = ["ML9"] }', "`per-file-ignores`.tests/*: unknown rule selector: ML9"),
        ("exclude = 1", "`exclude`: expected an array of strings, got an integer"),
        ("extend-exclude = { a = 1 }", "`extend-exclude`: expected an array of strings, got a table"),
        ('respect-gitignore = "no"', "`respect-gitignore`: expected true or false, got a string ('no')"),
        ("force-exclude = 1", "`force-exclude`: expected true or false, got an integer"),
        ('fail-on = "fatal"', "`fail-on`: unknown severity 'fatal' (expected info, warning or error)"),
        ("fail-on = 2", '`fail-on`: expected "error", "warning" or "info", got an integer'),
        ("fail-on = 2.5", '`fail-on`: expected "error", "warning" or "info", got a float'),
        ('severity = "error"', '`severity`: expected a table of CODE = "error" | "warning" | "info", got a string (\'error\')'),
        ('severity = { ML999 = "error" }', "`severity`: unknown rule code ML999"),
        ('severity = { ML301 = "fatal" }', "`severity`.ML301: unknown severity 'fatal' (expected info, warning or error)"),
        ("severity = { ML301 = true }", '`severity`.ML301: expected "error", "warning" or "info", got a boolean'),
        ("extend = 3", "`extend`: expected a path, got an integer"),
    ],
)
def test_bad_value_is_an_error_naming_file_and_key(tmp_path, line, message):
    path = write(tmp_path / "mllint.toml", line + "\n").resolve()
    assert config_error(tmp_path / "a.py") == f"{path}:1:1: {message}"


def test_bad_value_in_pyproject_names_the_pyproject(tmp_path):
    path = write(tmp_path / "pyproject.toml", '[tool.mllint]\nfail-on = "never"\n').resolve()
    assert config_error(tmp_path / "a.py") == (
        f"{path}:2:1: `tool.mllint.fail-on`: unknown severity 'never' (expected info, warning or error)"
    )


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ('[project]\nname = "x"\n\n[tool.mllint]\n# the rules\n  select = "ML1"\n', "6:3"),
        ('[tool.other]\nselect = []\n[ tool . "mllint" ]\nfail-on = "no"\n', "4:1"),
        ('[tool.mllint]\nignore = []\n\n[tool.mllint.severity]\nML301 = "fatal"\n', "4:1"),
        ('[tool.mllint]\nper-file-ignores.tests = "ML3"\n', "2:1"),
        ('[tool.mllint]\n"exclude" = 1\n', "2:1"),
    ],
)
def test_a_bad_key_is_named_with_its_line_and_column(tmp_path, text, position):
    path = write(tmp_path / "pyproject.toml", text).resolve()
    assert config_error(tmp_path / "a.py").startswith(f"{path}:{position}: `tool.mllint.")


def test_values_are_normalised(tmp_path):
    write(tmp_path / "mllint.toml", 'select = ["ml3, ML0"]\nfail-on = "WARNING"\nseverity = { ml301 = "Info" }\n')
    found = settings(tmp_path / "a.py")
    assert found.select == ("ML3", "ML0")
    assert found.fail_on is Severity.WARNING
    assert found.severity == {"ML301": Severity.INFO}


# What the settings do.


def test_select_ignore_and_extend_select_with_prefixes(tmp_path):
    write(tmp_path / "mllint.toml", 'select = ["ML00"]\nextend-select = ["ML3"]\nignore = ["ML003", "ML004"]\n')
    expected = {code for code in all_rules() if code.startswith(("ML00", "ML3"))} - {"ML003", "ML004"}
    assert settings(tmp_path / "a.py").codes() == expected
    assert {"ML001", "ML002", "ML005", "ML006", "ML009", "ML301"} <= expected


def test_severity_override_changes_the_reported_severity(tmp_path):
    write(tmp_path / "mllint.toml", 'severity = { ML301 = "warning" }\n')
    path = write(tmp_path / "train.py", BUGGY)
    found = settings(path)
    [finding] = check_path(str(path), found.selection_for(str(path)), Job()).findings
    assert (finding.code, finding.severity) == ("ML301", Severity.WARNING)


def test_without_severity_override_the_rule_severity_is_reported(tmp_path):
    path = write(tmp_path / "train.py", BUGGY)
    [finding] = check_path(str(path), settings(path).selection_for(str(path)), Job()).findings
    assert (finding.code, finding.severity) == ("ML301", Severity.ERROR)


def test_per_file_ignores_globs_are_relative_to_the_configuration(tmp_path):
    write(tmp_path / "mllint.toml", 'per-file-ignores = { "tests/*" = ["ML3"], "*_gen.py" = ["ML301"] }\n')
    resolver = Resolver({})

    def has_ml301(relative: str) -> bool:
        path = str(tmp_path / relative)
        return "ML301" in {rule.code for rule in resolver.settings_for(path).selection_for(path).rules}

    assert has_ml301("train.py")
    assert not has_ml301("tests/test_train.py")
    assert not has_ml301("tests/unit/test_model.py")
    assert not has_ml301("src/model_gen.py")
    assert has_ml301("src/tests/test_x.py")


def test_per_file_ignores_keep_mandatory_rules(tmp_path):
    write(tmp_path / "mllint.toml", 'per-file-ignores = { "*.py" = ["ALL"] }\n')
    path = str(tmp_path / "a.py")
    codes = {rule.code for rule in Resolver({}).settings_for(path).selection_for(path).rules}
    assert codes == {"ML001", "ML002", "ML005", "ML006", "ML009"}


def test_edited_configuration_is_read_again(tmp_path):
    path = write(tmp_path / "mllint.toml", 'select = ["ML3"]\n')
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert settings(tmp_path / "a.py").select == ("ML3",)
    path.write_text('select = ["ML0"]\nfail-on = "error"\n')
    os.utime(path, ns=(1_000_000_005_000_000_000, 1_000_000_005_000_000_000))
    found = settings(tmp_path / "a.py")
    assert (found.select, found.fail_on) == (("ML0",), Severity.ERROR)


def test_configuration_that_becomes_invalid_is_reported(tmp_path):
    path = write(tmp_path / "mllint.toml", 'select = ["ML3"]\n')
    assert settings(tmp_path / "a.py").select == ("ML3",)
    path.write_text('select = ["ML3"]\ncolour = "blue"\n')
    os.utime(path, ns=(1_000_000_005_000_000_000, 1_000_000_005_000_000_000))
    assert config_error(tmp_path / "a.py").startswith(f"{path.resolve()}:2:1: unknown key `colour`; the keys are ")


def test_show_settings_describes_every_key(tmp_path):
    path = write(tmp_path / "mllint.toml", 'select = ["ML3"]\nseverity = { ML301 = "warning" }\n')
    assert settings(tmp_path / "a.py").describe().splitlines() == [
        f"# settings from {path.resolve()} (root {tmp_path.resolve()})",
        "select = ['ML3']",
        "extend-select = []",
        "ignore = []",
        "unfixable = []",
        "per-file-ignores = []",
        "exclude = ['.git', '.hg', '.svn', '.bzr', '.venv', 'venv', '.tox', '.nox', '.eggs', '*.egg-info', 'build', "
        "'dist', 'site-packages', '__pycache__', '.mypy_cache', '.pytest_cache', '.ruff_cache', '.mllint_cache', "
        "'node_modules', '__pypackages__', '.ipynb_checkpoints']",
        "extend-exclude = []",
        "respect-gitignore = True",
        "force-exclude = False",
        "fail-on = info",
        "severity = {ML301 = warning}",
        "analysis-budget = 30.0",
    ]


def test_the_readme_example_is_a_valid_configuration_setting_every_key(tmp_path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    [example] = [block for block in readme.split("```toml\n")[1:] if block.startswith("[tool.mllint]")]
    write(tmp_path / "pyproject.toml", example.split("```")[0])
    found = settings(tmp_path / "a.py")
    assert (found.unfixable, found.fail_on) == (("ML301",), Severity.WARNING)
    assert {line.split(" =")[0] for line in example.split("```")[0].splitlines()[1:]} == set(SCHEMA) - {"extend"}
