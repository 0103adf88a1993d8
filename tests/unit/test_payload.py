"""Object content is a function of (name, seed): nothing large is stored."""

import pytest

from loadgen.payload import PayloadSource


@pytest.fixture(scope="module")
def source():
    return PayloadSource(seed=1, min_size=100, max_size=200)


def test_content_is_the_same_for_the_same_name_and_seed(source):
    again = PayloadSource(seed=1, min_size=100, max_size=200)

    assert source.content("obj-1") == again.content("obj-1")


def test_content_differs_between_names(source):
    assert source.content("obj-1") != source.content("obj-2")


def test_content_differs_between_seeds(source):
    other = PayloadSource(seed=2, min_size=100, max_size=200)

    assert source.content("obj-1") != other.content("obj-1")


def test_size_stays_within_the_range_and_covers_it(source):
    sizes = [len(source.content(f"obj-{i}")) for i in range(2000)]

    assert min(sizes) >= 100
    assert max(sizes) <= 200
    assert len(set(sizes)) > 90  # spread over the range, not one size


def test_content_length_is_size_of_the_name(source):
    assert len(source.content("obj-7")) == source.size_of("obj-7")


def test_a_fixed_size_gives_that_size_for_every_name():
    source = PayloadSource(seed=1, min_size=4096, max_size=4096)

    assert {len(source.content(f"obj-{i}")) for i in range(100)} == {4096}


def test_an_explicit_size_gives_content_of_that_size_reproducibly(source):
    assert len(source.content("obj-1", 150)) == 150
    assert source.content("obj-1", 150) == source.content("obj-1", 150)


def test_objects_larger_than_the_buffer_default_are_served():
    size = 20 * 1024 * 1024  # beyond the 16 MiB default buffer
    source = PayloadSource(seed=1, min_size=size, max_size=size)

    assert len(source.content("big")) == size


def test_matches_accepts_exactly_the_content_of_the_name_at_its_size(source):
    data = source.content("obj-3")
    size = len(data)
    flipped = bytes([data[0] ^ 1]) + data[1:]

    assert source.matches("obj-3", size, data)
    assert not source.matches("obj-3", size, flipped)  # one bit changed
    assert not source.matches("obj-3", size, data[:-1])  # truncated
    assert not source.matches("obj-3", size - 1, data)  # longer than asked
    assert not source.matches("obj-4", size, data)  # another object's name
    assert not source.matches("obj-3", size, None)
    assert source.matches("obj-3", 0, b"")
