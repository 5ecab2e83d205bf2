import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_format_modules_import_without_django():
    """assessments/formats is the pure core: workers and scripts must be able to use it without Django."""
    code = (
        "import sys\n"
        "import assessments.formats.errors, assessments.formats.lines, assessments.formats.topics_xml\n"
        "import assessments.formats.trec_run, assessments.formats.qrels, assessments.formats.documents\n"
        "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"
