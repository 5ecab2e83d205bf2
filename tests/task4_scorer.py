"""The organisers' Task 4 scorer (reference-evaluators/2023-task4/evaluation.py, never copied into the repo), run as
the lab runs it: the reference the classification figures must equal."""

import re
import subprocess
import sys
from pathlib import Path


def organisers_scores(touche_data: Path, truth: Path, run: Path, out: Path) -> dict[str, float]:
    """What evaluation.py prints, as key -> value: ``all-macro f1-score``, ``de-accuracy`` …"""
    scorer = touche_data / "reference-evaluators" / "2023-task4" / "evaluation.py"
    done = subprocess.run(
        [
            sys.executable,
            str(scorer),
            "--input_run",
            str(run),
            "--ground_truth",
            str(truth),
            "--output_prototext",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r'measure\{\s*key: "([^"]*)"\s*value: "([^"]*)"\s*\}', done.stdout)
    assert found and len(found) == done.stdout.count("measure{")
    return {key: float(value) for key, value in found}
