"""`faultline inventory discover`'s own checks of --output, made before anything is read."""

from __future__ import annotations

from click.testing import CliRunner

from service.cli.inventory import inventory_group


def test_an_output_in_a_directory_that_does_not_exist_is_one_error_before_discovery(tmp_path):
    output = tmp_path / "missing" / "inventory.yaml"

    result = CliRunner().invoke(inventory_group, ["discover", "swift", str(tmp_path / "none"),
                                                  "-o", str(output)])

    assert result.exit_code == 2
    assert result.output == f"error: the directory of {output} does not exist\n"
