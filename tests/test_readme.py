import re
from pathlib import Path

from mllint.rule_table import readme_table, rule_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_table_is_in_sync_with_the_registry():
    table = readme_table(README.read_text(encoding="utf-8"))
    assert table == rule_table(), "run `python -m mllint.rule_table README.md`"


def test_readme_starts_with_the_two_set_up_commands():
    blocks = re.findall(r"^```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    install_and_run, install_and_test = blocks[:2]
    assert "pip install ." in install_and_run and "mllint fixtures/demo" in install_and_run
    assert "'.[test]'" in install_and_test and "pytest" in install_and_test


def test_every_opt_in_rule_says_why_in_the_rule_table():
    from mllint.registry import all_rules

    for code, rule in all_rules().items():
        assert bool(rule.opt_in) == bool(rule.opt_in_reason), code
