"""Markers with mistakes (test/integration/python/pytest_plugin_test.cpp): each is a usage
error said before any test runs, one line each, with no traceback."""
import pytest


@pytest.mark.cuda_memory(max_peek="1MiB")
def test_typo():
    pass


@pytest.mark.cuda_memory(max_peak="2 GiBs")
def test_bad_size():
    pass


@pytest.mark.cuda_memory(max_leaked=0)
def test_fine():
    pass
