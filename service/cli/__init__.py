"""The `faultline` command line: thin wrappers over the service's functions, one module per
command group, on the one group of service.cli.group (its error handling included), which
imports a command's module when the command is used."""

from __future__ import annotations

from .group import main

__all__ = ["main"]
