"""Colour for the text formats on a terminal: never when the output is not one (unless FORCE_COLOR is
set), never when NO_COLOR is set (which wins, as in CPython)."""
from __future__ import annotations

import os
from typing import TextIO

BOLD, RED, GREEN, BLUE, CYAN = "1", "31", "32", "34", "36"


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Palette:
    """`paint(text, BOLD, RED)`: the text in those ANSI styles, or as it is when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not text or not styles:
            return text
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m"
