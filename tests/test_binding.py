"""The one argument binder (`calls.bind_arguments`): arguments bound to parameters as Python binds them,
what `*args` or `**kwargs` may fill unknown (None), what the call leaves out absent (its default)."""
import ast

import pytest

from mllint.analysis.program.calls import bind_arguments, bind_values

FUNCTION = "def f(a, b, c=1, *rest, d=2, **extra): pass"
METHOD = "def m(self, x, /, y): pass"


def bound(definition: str, call: str, skips_first: bool = False) -> dict[str, str | None]:
    function = ast.parse(definition).body[0]
    arguments = bind_arguments(ast.parse(call, mode="eval").body, function, skips_first)
    return {name: None if argument is None else ast.unparse(argument) for name, argument in arguments.items()}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("f(x, y)", {"a": "x", "b": "y"}),
        ("f(x, c=z, b=y)", {"a": "x", "c": "z", "b": "y"}),
        ("f(x, y, z, w, v)", {"a": "x", "b": "y", "c": "z"}),
        ("f(*xs)", {"a": None, "b": None, "c": None}),
        ("f(x, *xs, d=w)", {"a": "x", "d": "w", "b": None, "c": None}),
        ("f(x, **kw)", {"a": "x", "b": None, "c": None, "d": None}),
        ("f(**kw, b=y)", {"b": "y", "a": None, "c": None, "d": None}),
        ("f(x, y, rest=z, extra=w)", {"a": "x", "b": "y"}),
    ],
)
def test_arguments_bind_as_python_binds_them(call, expected):
    assert bound(FUNCTION, call) == expected


def test_a_method_called_on_its_object_binds_after_self_and_positional_only_parameters_take_no_keyword():
    assert bound(METHOD, "obj.m(u, v)", skips_first=True) == {"x": "u", "y": "v"}
    assert bound(METHOD, "obj.m(y=v, x=u)", skips_first=True) == {"y": "v"}


def test_what_a_family_makes_of_the_arguments_binds_the_same_way():
    function = ast.parse(FUNCTION).body[0]
    assert bind_values(function, [(2, 3)], [("d", (4,)), (None, ())], skips_first=False) == {
        "a": (2, 3), "d": (4,), "b": None, "c": None
    }  # fmt: skip
