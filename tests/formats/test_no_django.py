import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PURE = {
    # assessments/formats is the pure core: workers and scripts must be able to use it without Django.
    "formats": "assessments.formats.errors, assessments.formats.lines, assessments.formats.topics_xml, "
    "assessments.formats.trec_run, assessments.formats.qrels, assessments.formats.documents",
    # So are the computations, tested directly against independent references.
    "metrics": "assessments.metrics.agreement, assessments.metrics.assignment, assessments.metrics.duplicates, "
    "assessments.metrics.evaluation, assessments.metrics.pooling, assessments.metrics.union_find",
    # Sanitising is tested with XSS vectors, and chart geometry with plain numbers, without a request or a database.
    "rendering": "assessments.rendering",
    "charts": "assessments.charts",
}


@pytest.mark.parametrize("modules", PURE.values(), ids=PURE.keys())
def test_the_pure_modules_import_without_django(modules):
    code = f"import sys\nimport {modules}\nprint(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"
