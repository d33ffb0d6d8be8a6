"""ML413 names where a term cut in one function of the project joins the loss another one returns."""
from pathlib import Path

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "autograd_scores_joined_in_steps"


def test_the_message_names_the_sum_the_score_joins():
    project = ProjectIndex.for_paths([str(FIXTURE)])
    found = lint_path(str(FIXTURE / "loop.py"), Selection.of(["ML413"]), display_path="loop.py", project=project)
    assert [f.code for f in found] == ["ML413"]
    assert "returns (scores.py:4)" in found[0].message
    assert "added to the loss at segmenter.py:20" in found[0].message
