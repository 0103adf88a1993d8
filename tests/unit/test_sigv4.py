"""The S3 driver's own Signature V4 (loadgen/sigv4.py) gives botocore's signature, header
for header, for each shape of request the driver sends, with a tempauth key ("account:user")
left as it is in the Credential."""

from __future__ import annotations

import datetime
from unittest import mock

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from loadgen.sigv4 import Signer

HOST = "127.0.0.1:8280"
NOW = 1_796_300_000.0  # 2026-12-04, a fixed time for both signers

REQUESTS = [
    ("GET", "/", None),  # the key check: list the buckets
    ("PUT", "/faultline-000", None),
    ("PUT", "/faultline-000/p1-1-obj%20with%20space", b"x" * 4096),
    ("GET", "/faultline-000/obj-7", None),
    ("HEAD", "/faultline-000/obj-7", None),
    ("DELETE", "/faultline-000/obj-7", None),
    ("GET", "/faultline-000?list-type=2&max-keys=1000", None),
    ("GET", "/faultline-000?list-type=2&max-keys=1000&continuation-token=a%2Fb%3D%3D", None),
    ("POST", "/faultline-000/big?uploads", None),
    ("PUT", "/faultline-000/big?partNumber=2&uploadId=2~abc.def", b"p" * 100),
    ("POST", "/faultline-000/big?uploadId=2~abc.def", b"<CompleteMultipartUpload/>"),
]


def botocore_headers(access_key, secret, method, path, body):
    request = AWSRequest(method=method, url=f"http://{HOST}{path}", data=body or b"")
    when = datetime.datetime.fromtimestamp(NOW, datetime.UTC).replace(tzinfo=None)
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        S3SigV4Auth(Credentials(access_key, secret), "s3", "us-east-1").add_auth(request)
    return {k: request.headers[k] for k in ("X-Amz-Date", "X-Amz-Content-SHA256",
                                              "Authorization")}


@pytest.mark.parametrize("access_key", ["test:tester", "0555b35654ad1656d804"])
@pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
def test_the_signature_is_botocores(access_key, method, path, body):
    ours = Signer(access_key, "testing", "us-east-1").headers(method, HOST, path, body, NOW)

    assert ours == botocore_headers(access_key, "testing", method, path, body)


def test_another_secret_or_day_gives_another_signature():
    signer = Signer("test:tester", "testing", "us-east-1")
    first = signer.headers("GET", HOST, "/", None, NOW)["Authorization"]

    assert Signer("test:tester", "other", "us-east-1").headers(
        "GET", HOST, "/", None, NOW)["Authorization"] != first
    assert signer.headers("GET", HOST, "/", None, NOW + 86_400)["Authorization"] != first
    assert signer.headers("GET", HOST, "/", None, NOW)["Authorization"] == first
