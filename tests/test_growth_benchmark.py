"""The cost guard's inputs and arithmetic (its timings are a benchmark's, never a test's)."""
import ast
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from growth import SHAPES, exponent  # noqa: E402

from mllint.notebook import load as load_notebook  # noqa: E402


def test_every_shape_is_a_valid_program_growing_with_its_size():
    for name, shape in SHAPES.items():
        small, large = shape(2, []), shape(4, [])
        programs = [load_notebook(t).python if name == "notebook" else t for t in (small, large)]
        trees = [ast.parse(program) for program in programs]
        assert len(list(ast.walk(trees[1]))) > len(list(ast.walk(trees[0]))), name


def test_optional_terms_are_one_guarded_augmented_assignment_each_inside_the_training_loop():
    loops = [n for n in ast.walk(ast.parse(SHAPES["loss-terms"](3, []))) if isinstance(n, ast.For)]
    loop = loops[-1]  # for inputs, targets in loader
    guarded = [n for n in loop.body if isinstance(n, ast.If) and isinstance(n.body[0], ast.AugAssign)]
    assert [n.test.attr for n in guarded] == ["use_0", "use_1", "use_2"]


def test_the_exponent_is_the_slope_in_log_log():
    lines = [100, 200, 400, 800]
    assert math.isclose(exponent(lines, [n * 0.001 for n in lines]), 1.0)
    assert math.isclose(exponent(lines, [(n / 100) ** 2 for n in lines]), 2.0)
