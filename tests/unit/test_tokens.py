"""API tokens: 256 random bits behind a recognisable prefix, stored as SHA-256 hex."""

from __future__ import annotations

import hashlib

from service.accounts import tokens


def test_a_token_is_prefixed_and_carries_256_random_bits():
    token = tokens.new_token()

    assert token.startswith("fl_")
    assert len(token) - len("fl_") == 43  # 32 bytes, base64url without padding


def test_two_tokens_differ():
    assert tokens.new_token() != tokens.new_token()


def test_the_stored_form_is_the_sha256_hex_digest():
    token = tokens.new_token()

    assert tokens.token_hash(token) == hashlib.sha256(token.encode()).hexdigest()


def test_the_shown_prefix_is_the_tokens_first_nine_characters():
    token = tokens.new_token()

    assert tokens.shown_prefix(token) == token[:9]
