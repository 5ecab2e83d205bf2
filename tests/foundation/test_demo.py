"""`make demo` on a laptop with nothing installed: SQLite under TOUCHSTONE_VAR_DIR, Celery inline.

Runs the real commands in a subprocess with DATABASE_URL and CELERY_BROKER_URL removed from the environment, so
the demo path is exercised exactly as a newcomer meets it (the rest of the suite runs on PostgreSQL).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COUNTS = """
from accounts.models import User
from django.db.models import Sum
from assessments.models import Assignment, Document, PoolEntry, PoolSource, Ranking, Run, Topic
print("COUNTS " + json.dumps({
    "users": User.objects.count(), "topics": Topic.objects.count(), "documents": Document.objects.count(),
    "runs": Run.objects.count(), "run_lines": Ranking.objects.aggregate(n=Sum("length"))["n"], "pool": PoolEntry.objects.count(),
    "sources": PoolSource.objects.count(), "assignments": Assignment.objects.count(),
}))
"""

# Every page the demo people reach, logged in as each of them; then the main phase starts and alice judges one
# document of her main-phase topic through the API (the demo is in training, which keeps that topic closed).
PAGES = """
from django.test import Client
from django.urls import reverse
from assessments.models import Assignment, Campaign, Judgment, PoolEntry
from assessments.services.assignments import close_training_round

SLUG = "demo"
organiser_pages = [
    reverse("assessments:campaign_list"), reverse("assessments:campaign", args=[SLUG]),
    reverse("assessments:pool", args=[SLUG]), reverse("assessments:imports", args=[SLUG]),
    reverse("assessments:assignments", args=[SLUG]), reverse("assessments:qrels", args=[SLUG]),
    reverse("assessments:leaderboard", args=[SLUG]), reverse("assessments:leaderboard_csv", args=[SLUG]),
    reverse("api-pool", args=[SLUG]), reverse("api-pool-preview", args=[SLUG]) + "?depth=10",
]
# The agreement dashboard is the campaign admin's (organisers get 404 there).
admin_pages = [reverse("assessments:agreement", args=[SLUG]), reverse("assessments:disagreements", args=[SLUG])]
seen = {}
for name, pages in (("olivia", organiser_pages), ("ada", organiser_pages + admin_pages)):
    client = Client(HTTP_HOST="127.0.0.1")
    assert client.login(username=name, password=name + "-demo"), name
    for url in pages:
        seen[name + " " + url] = client.get(url).status_code
for name in ("alice", "bob"):
    client = Client(HTTP_HOST="127.0.0.1")
    assert client.login(username=name, password=name + "-demo"), name
    seen[name + " my_work"] = client.get(reverse("annotation:my_work")).status_code
    for assignment in Assignment.objects.filter(assessor__username=name, active=True):
        seen[f"{name} judge {assignment.phase} {assignment.pk}"] = client.get(reverse("annotation:judge", args=[assignment.pk, 1])).status_code
        seen[f"{name} resume {assignment.phase} {assignment.pk}"] = client.get(reverse("annotation:resume", args=[assignment.pk]), follow=True).status_code

close_training_round(campaign=Campaign.objects.get(slug=SLUG), then="main", by=None)
alice = Client(HTTP_HOST="127.0.0.1")
alice.login(username="alice", password="alice-demo")
assignment = Assignment.objects.filter(assessor__username="alice", active=True, phase="main").first()
opened = alice.get(reverse("annotation:judge", args=[assignment.pk, 1])).status_code
entry = PoolEntry.objects.filter(topic=assignment.topic).order_by("order").first()
url = reverse("work-judgment", args=[assignment.pk, entry.pk])
saved = alice.put(url, {"labels": {"relevance": 2, "quality": 1, "stance": "FIRST"}, "time_spent_ms": 1500},
                  content_type="application/json")
read = alice.get(url)
stored = Judgment.objects.get(assessor__username="alice", topic=assignment.topic, document=entry.document)
print("PAGES " + json.dumps({
    "seen": seen, "opened": opened, "saved": saved.status_code, "read": read.status_code, "read_body": read.json(),
    "stored": stored.labels,
}))
"""


def _demo_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")}
    return {**env, "DEBUG": "1", "TOUCHSTONE_VAR_DIR": str(tmp_path)}


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _manage(env: dict, *args: str) -> str:
    done = _run(env, *args)
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _tagged(output: str, tag: str) -> dict:
    line = next(line for line in output.splitlines() if line.startswith(tag + " "))
    return json.loads(line[len(tag) + 1 :])


def test_demo_loads_twice_and_every_page_works_on_sqlite(tmp_path):
    env = _demo_env(tmp_path)
    _manage(env, "migrate", "--noinput", "-v0")
    assert (tmp_path / "touchstone.sqlite3").exists()

    first = _manage(env, "load_demo")
    counts = _tagged(_manage(env, "shell", "-c", "import json\n" + COUNTS), "COUNTS")
    second = _manage(env, "load_demo", "--port", "8123")
    again = _tagged(_manage(env, "shell", "-c", "import json\n" + COUNTS), "COUNTS")

    for output in (first, second):
        for name in ("olivia", "ada", "alice", "bob"):
            assert f"{name}-demo" in output
    assert "http://127.0.0.1:8000/" in first and "http://127.0.0.1:8123/" in second

    assert again == counts
    assert counts["users"] == 4 and counts["topics"] == 3 and counts["runs"] == 2
    assert counts["pool"] > 0 and counts["sources"] >= counts["pool"] and counts["assignments"] >= 4
    # Depth 5 over both orders: each topic's pool is at least one run's top 5.
    assert counts["pool"] >= 3 * 5

    pool_file = tmp_path / "pool.txt"
    _manage(env, "build_pool", "demo", "--depth", "5")
    _manage(env, "export_pool", "demo", "--output", str(pool_file))
    assert len(pool_file.read_text().splitlines()) == counts["pool"]
    assert _tagged(_manage(env, "shell", "-c", "import json\n" + COUNTS), "COUNTS") == counts

    result = _tagged(_manage(env, "shell", "-c", "import json\n" + PAGES), "PAGES")
    # Main-phase topics are refused (403, saying so) until the main phase starts; then they open.
    failed = {page: code for page, code in result["seen"].items() if code != (403 if " main " in page else 200)}
    assert not failed, failed
    assert any(" judge training " in page for page in result["seen"] if page.startswith("alice"))
    assert any(" judge main " in page for page in result["seen"] if page.startswith("bob"))
    assert result["opened"] == 200 and result["saved"] == 200 and result["read"] == 200
    assert result["read_body"]["labels"] == {"relevance": 2, "quality": 1, "stance": "FIRST"}
    assert result["stored"] == {"relevance": 2, "quality": 1, "stance": "FIRST"}

    qrels = tmp_path / "qrels.txt"
    _manage(env, "export_qrels", "demo", "--kind", "relevance", "--phase", "main", "--output", str(qrels))
    lines = [line.split() for line in qrels.read_text().splitlines()]
    assert len(lines) == 1 and lines[0][3] == "2"  # alice's one main-phase judgment

    # Bulk qrels import loads the file with COPY: on SQLite it refuses with a clear message and changes nothing.
    refused = _run(env, "import_qrels", "demo", str(qrels), "--kind", "relevance", "--assessor", "lastyear")
    assert refused.returncode != 0
    assert "needs PostgreSQL" in refused.stdout + refused.stderr
    assert _tagged(_manage(env, "shell", "-c", "import json\n" + COUNTS), "COUNTS")["users"] == counts["users"]


def test_make_demo_prints_the_port_it_serves():
    dry_run = subprocess.run(["make", "-n", "demo", "PORT=8123"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "load_demo --port 8123" in dry_run and "runserver 127.0.0.1:8123" in dry_run
