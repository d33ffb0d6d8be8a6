from mllint.cli import run

run()
