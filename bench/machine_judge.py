"""What a machine judge costs beyond its model: the job's own time per label, and the local model's speed.

    .venv/bin/python bench/machine_judge.py                  # 600 endpoint labels, 8 in flight; 400 local passages
    .venv/bin/python bench/machine_judge.py --labels 2000 --passages 1000

Endpoint: a chat-completions server on loopback (tests/chat_server.py, the tests' stand-in) answers at once, so a
run's time is the job's own work plus the HTTP round trips. The floor, in the same run, is the same number of
requests with the same prompts sent by plain threads (urllib, the same concurrency) and nothing stored. The job's
own cost per label is the difference, divided by the labels: filling the prompt, reading the answer, writing the
row with its provenance (the database checks it against the scheme), progress. Goal: under 5 ms a label.

Local: the embedded judge (services.machine_local) on one core (MACHINE_LOCAL_THREADS=1) over generated English
passages of 90–140 words (read to its first 128 word pieces), after the model has loaded. Goal: at least 50
passages a second. Prints the machine's load beside the figures.

Builds its own database, `touchstone_bench_machine`.
"""

import argparse
import json
import os
import random
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdb import bench_campaign  # noqa: E402

NAME = "touchstone_bench_machine"
WORDS = (
    "people should argue whether cities must ban cars from their centres because pollution harms health while "
    "shops fear losing customers and commuters need transport so public buses trains bicycles and walking offer "
    "alternatives that many studies support although costs taxes and freedom matter to voters who decide"
).split()


def passage(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(90, 140))).capitalize() + "."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=int, default=600)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--passages", type=int, default=400)
    args = parser.parse_args()
    os.environ["MACHINE_LOCAL_THREADS"] = "1"
    campaign, topics = bench_campaign(NAME, topics=max(1, args.labels // 100))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from assessments.models import Document, PoolEntry
    from assessments.services import machine_judges
    from assessments.services.machine_local import similarities
    from tests.chat_server import chat_server

    rng = random.Random(7)
    documents = Document.objects.bulk_create(
        [Document(collection=campaign.collection, doc_id=f"doc-{i}", body=passage(rng), has_text=True) for i in range(args.labels)]
    )
    PoolEntry.objects.bulk_create(
        [PoolEntry(topic=topics[i % len(topics)], document=d, order=i) for i, d in enumerate(documents)]
    )
    failed = False
    with chat_server() as server:
        judge = machine_judges.add_judge(campaign=campaign, name="bench", kind="endpoint", model="bench-model",
                                         base_url=server.url, in_flight=args.in_flight, by=None)
        start = time.perf_counter()
        summary = machine_judges.run_judge(judge=judge, dimensions=["relevance"])
        job_seconds = time.perf_counter() - start
        assert summary["labelled"] == args.labels, summary
        bodies = [request["body"] for request in server.requests]

        def send(body: dict) -> None:
            data = json.dumps(body).encode()
            request = urllib.request.Request(server.url + "/chat/completions", data=data, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as response:
                response.read()

        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.in_flight) as pool:
            list(pool.map(send, bodies))
        floor_seconds = time.perf_counter() - start
    own_ms = (job_seconds - floor_seconds) / args.labels * 1000
    print(f"endpoint, {args.labels} labels, {args.in_flight} in flight (load {os.getloadavg()[0]:.2f}):")
    print(f"  machine_judge run  {job_seconds:7.2f} s   {job_seconds / args.labels * 1000:6.2f} ms a label")
    print(f"  plain HTTP floor   {floor_seconds:7.2f} s   {floor_seconds / args.labels * 1000:6.2f} ms a request")
    print(f"  job's own cost     {own_ms:6.2f} ms a label (goal < 5)")
    failed |= own_ms >= 5

    texts = [passage(rng) for _ in range(args.passages)]
    similarities("warm-up", texts[:8])  # loads the model (about 10 s), not what a label costs
    start = time.perf_counter()
    similarities("Should cities ban cars from their centres?", texts)
    local_seconds = time.perf_counter() - start
    rate = args.passages / local_seconds
    print(f"local model, {args.passages} passages of 90-140 words, one core (load {os.getloadavg()[0]:.2f}):")
    print(f"  {local_seconds:.2f} s   {rate:.1f} passages/s (goal >= 50)")
    failed |= rate < 50
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
