"""Fixtures for the file-format tests: the checked-in samples (the real Touché files come from the
`touche_data` fixture in tests/conftest.py, which skips when TOUCHE_DATA is not set)."""

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "formats"


@pytest.fixture
def samples() -> Path:
    """Small good and bad files written for these tests (tests/data/formats)."""
    return SAMPLES
