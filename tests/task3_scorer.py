"""The organisers' Task 3 evaluator (reference-evaluators/2022-task3/submission-evaluator.sh, never copied into the
repo), run as the lab runs it: the reference the image measures must equal. It needs gawk: the `gawk_on_path`
fixture (tests/conftest.py) gives the environment to run it in."""

import subprocess
from pathlib import Path

EVALUATOR = Path("reference-evaluators", "2022-task3", "submission-evaluator.sh")
HEADER = "topic,onTopic,argumentative,onStance,onTopicPro,argumentativePro,onStancePro,onTopicCon,argumentativeCon,onStanceCon"


def organisers_output(touche_data: Path, env: dict[str, str], tmp_path: Path, qrels: str, run: str) -> tuple[str, str]:
    """The evaluator's topic table (stdout from its header on) and its output file, as text."""
    qrels_path, run_path, output = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "evaluation.prototext"
    qrels_path.write_text(qrels)
    run_path.write_text(run)
    result = subprocess.run(
        ["sh", str(touche_data / EVALUATOR), str(qrels_path), str(run_path), str(output)],
        env=env, capture_output=True, text=True, check=True,
    )
    stdout = result.stdout
    assert HEADER in stdout, stdout
    return stdout[stdout.index(HEADER):], output.read_text()
