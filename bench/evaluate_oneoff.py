"""A one-off evaluation as a user types it, start-up included: Touchstone's `evaluate_runs` with three measures in
one call, beside the same three measures one call each and beside pytrec_eval (trec_eval 9's code) in a fresh
process reading the same files, in one run.

    .venv/bin/python bench/evaluate_oneoff.py            # needs ../shared/data/touche (or TOUCHE_DATA)
    .venv/bin/python bench/evaluate_oneoff.py --runs 21 --repeats 5

The data are the real Touché 2020 Task 1 files the tests use: its topics (BEIR's copy), its relevance qrels and the
five post-hoc runs of team Shanks (48,781 lines each), each run written again under more tags up to --runs (21 by
default: 1.02 M run lines), since the shared data hold no more 2020 runs. The database `touchstone_bench_oneoff`
is created for it (dropped first). Timed: the wall time of each fresh process, median of --repeats. Measures:
nDCG@5, P@10 and AP (trec_eval's ndcg_cut_5, P_10, map), on the rank order of trec_eval (score, then document id).
The figures of both sides are compared before any timing: the bench fails if they differ.
Exits 1 when the one call is slower than pytrec_eval.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import ROOT, SERVER, recreate_database  # noqa: E402

DATABASE = "touchstone_bench_oneoff"
MEASURES = ("nDCG@5", "P@10", "AP")
PYTREC = {"nDCG@5": "ndcg_cut_5", "P@10": "P_10", "AP": "map"}
PYTREC_SCRIPT = """
import json, sys, pytrec_eval
qrels_path, measures, *runs = sys.argv[1:]
qrels = {}
for line in open(qrels_path):
    q, _, d, r = line.split()
    qrels.setdefault(q, {})[d] = int(r)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures.split(",")))
out = {}
for path in runs:
    run = {}
    for line in open(path):
        q, _, d, _, s, tag = line.split()
        run.setdefault(q, {})[d] = float(s)
    per_topic = evaluator.evaluate(run)
    out[tag] = {m: sum(t[m] for t in per_topic.values()) / len(per_topic) for m in measures.split(",")}
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = Path(os.environ.get("TOUCHE_DATA", ROOT.parent / "shared" / "data" / "touche"))
    task = data / "2020-task1"
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{DATABASE}", "SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING",
           "PYTHONPATH": str(ROOT)}
    manage = [sys.executable, "manage.py"]

    def run(*argv: str) -> str:
        return subprocess.run([*manage, *argv], cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout

    recreate_database(DATABASE)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sources = sorted((task / "runs-shanks-posthoc").glob("*.txt"))
        runs = []
        for i in range(args.runs):
            text = sources[i % len(sources)].read_text()
            tag = f"shanks{i + 1:02d}"
            path = folder / f"{tag}.txt"
            path.write_text("".join(line.rsplit(None, 1)[0] + f" {tag}\n" for line in text.splitlines()))
            runs.append(path)
        qrels = folder / "qrels.txt"
        qrels.write_text((task / "qrels-relevance.txt").read_text())
        print(f"setting up {DATABASE}: {args.runs} runs, {sum(1 for p in runs for _ in open(p)):,} lines …", flush=True)
        run("migrate", "--verbosity", "0")
        run("create_campaign", "oneoff", "--name", "One-off", "--preset", "touche-2020-task1")
        run("import_topics", "oneoff", str(data / "beir-webis-touche2020" / "topics.beir-v1.0.0-webis-touche2020.test.tsv.gz"))
        run("import_runs", "oneoff", *map(str, runs))
        run("import_qrels", "oneoff", str(qrels), "--assessor", "touche20")

        ours_cmd = [*manage, "evaluate_runs", "oneoff", "--measure", ",".join(MEASURES), "--format", "json"]
        theirs_cmd = [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), ",".join(PYTREC.values()), *map(str, runs)]
        ours = {(r["run"], r["measure"]): r["mean"] for r in json.loads(subprocess.run(
            ours_cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout)}
        theirs = json.loads(subprocess.run(theirs_cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        differ = [(tag, m) for tag, values in theirs.items() for m in MEASURES if abs(values[PYTREC[m]] - ours[tag, m]) > 1e-9]
        if differ:
            print(f"figures differ from pytrec_eval: {differ[:5]}")
            return 1

        def timed(argv: list[str], *, with_env: bool = True) -> float:
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                subprocess.run(argv, cwd=ROOT, env=env if with_env else None, check=True, capture_output=True)
                times.append(time.perf_counter() - start)
            return statistics.median(times)

        one = timed(ours_cmd)
        three = sum(timed([*manage, "evaluate_runs", "oneoff", "--measure", m, "--format", "json"]) for m in MEASURES)
        peer = timed(theirs_cmd, with_env=False)
    print(f"machine load (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; medians of {args.repeats}; "
          f"{args.runs} runs, figures equal to pytrec_eval's")
    print(f"evaluate_runs --measure {','.join(MEASURES)}   {one:6.2f} s   {one / peer:4.2f}× pytrec_eval")
    print(f"evaluate_runs, one call per measure      {three:6.2f} s   {three / peer:4.2f}× pytrec_eval")
    print(f"pytrec_eval in a fresh process           {peer:6.2f} s")
    if one > peer:
        print("goal missed: the one call is slower than pytrec_eval")
        return 1
    print("goal met: one call is faster than pytrec_eval, start-up included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
