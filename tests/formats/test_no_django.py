import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _every_module(package: str) -> str:
    """Every module of the package, so a new one is covered without anyone remembering to list it."""
    paths = (ROOT / "assessments" / package).glob("*.py")
    return ", ".join(sorted(f"assessments.{package}.{path.stem}" for path in paths if path.stem != "__init__"))


PURE = {
    # assessments/formats is the pure core: workers and scripts must be able to use it without Django.
    "formats": _every_module("formats"),
    # So are the computations, tested directly against independent references.
    "metrics": _every_module("metrics"),
    # Sanitising is tested with XSS vectors, and chart geometry with plain numbers, without a request or a database.
    "rendering": "assessments.rendering",
    "charts": "assessments.charts",
    # The label scheme is read by every layer, the judge page's script included, and tested with plain data.
    "labels": "assessments.labels",
}


@pytest.mark.parametrize("modules", PURE.values(), ids=PURE.keys())
def test_the_pure_modules_import_without_django(modules):
    code = f"import sys\nimport {modules}\nprint(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"
