"""Marked tests in a process that never reaches CUDA (test/integration/python/pytest_plugin_test.cpp):
the tracer has seen no device, so there are no figures to judge."""
import pytest


@pytest.mark.cuda_memory(max_peak="1MiB")
def test_no_device():
    pass


@pytest.mark.cuda_memory(max_peak="1MiB", allow_incomplete=True)
def test_no_device_allowed():
    pass
