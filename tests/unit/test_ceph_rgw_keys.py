"""The lab's RGW keys are read from radosgw-admin's JSON, never from its prose."""

from __future__ import annotations

import pytest

from lab.ceph_rgw import user_keys
from lab.exceptions import LabError


def _info(s3_pairs: list[tuple[str, str]], swift: list[str]) -> dict:
    return {"user_id": "faultline",
            "keys": [{"user": "faultline", "access_key": a, "secret_key": s}
                     for a, s in s3_pairs],
            "swift_keys": [{"user": "faultline:swift", "secret_key": k} for k in swift]}


def test_user_keys_takes_the_swift_key_and_the_s3_pair() -> None:
    assert user_keys(_info([("AK1", "SK1")], ["SW1"])) == {
        "swift_key": "SW1", "s3_access_key": "AK1", "s3_secret_key": "SK1"}


def test_user_keys_keeps_the_s3_pair_already_in_the_key_file() -> None:
    info = _info([("AK1", "SK1"), ("AK2", "SK2")], ["SW1"])
    assert user_keys(info, current_access_key="AK2")["s3_secret_key"] == "SK2"
    assert user_keys(info, current_access_key="gone")["s3_access_key"] == "AK1"


def test_user_keys_ignores_keys_of_other_subusers() -> None:
    info = _info([("AK1", "SK1")], ["SW1"])
    info["swift_keys"].insert(0, {"user": "faultline:other", "secret_key": "NOPE"})
    assert user_keys(info)["swift_key"] == "SW1"


@pytest.mark.parametrize(("s3", "swift", "missing"), [
    ([("AK1", "SK1")], [], "Swift key"),
    ([], ["SW1"], "S3 key"),
])
def test_user_keys_says_which_key_is_missing(s3, swift, missing) -> None:
    with pytest.raises(LabError, match=f"RGW user faultline has no {missing}"):
        user_keys(_info(s3, swift))
