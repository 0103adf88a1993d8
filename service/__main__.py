"""`python -m service ...` is `faultline ...` (for when the console script is not on PATH)."""

from .cli.group import main

main(prog_name="faultline")
