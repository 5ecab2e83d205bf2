"""How fast the judge page and a label save are at campaign scale, under 50 assessors at once.

    .venv/bin/python bench/judge_page.py                 # build the database, then measure
    .venv/bin/python bench/judge_page.py --reuse         # measure again on the database built before

Builds `touchstone_bench_judge` (or BENCH_JUDGE_DB) from scratch (dropped and migrated first) with PostgreSQL COPY:
1 M documents, 4 M run lines (80 runs × 50 topics × 1000), 50 topics with pools of 2,400
documents (one in 20 a duplicate, and the campaign propagates labels to duplicates), 50
assessors (one main-phase topic each) and 100 k judgments with their history.
Pooled documents carry realistic bodies (2-12 KB, a third of them HTML, every one distinct so the
sanitiser's cache does not flatter the figures).

Then it starts gunicorn on a free 127.0.0.1 port against that database and lets 50 simulated
assessors work at once, each over its own keep-alive connection: open the judge page at the
document to judge, think, save a label (PATCH to the assessor API with the revision the page showed,
as the judge page's script does), think, go to the next document. Think time defaults to 1-3 s between steps, about ten times faster than real
assessors (Campaign.seconds_per_judgment is 30). Every worker is warmed up first (one page per
assessor), then `--duration` seconds are measured.

Each request is timed twice: by gunicorn (its access log's %(D)s, the server time the targets
are about) and by the assessor's client over loopback (adding queueing for a free worker and the
client's own scheduling). Prints count, rate, p50/p95/p99/max for both, errors and the machine's
load average (other processes on the machine show up in the figures), and exits 1 if a target is
missed: server p95 below 50 ms for the judge page and 30 ms for a save, and no errors.
"""

import argparse
import http.client
import io
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB_NAME = os.environ.get("BENCH_JUDGE_DB", "touchstone_bench_judge")  # another name keeps a second copy apart
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE_URL = f"{PG}/{DB_NAME}"
IMAGE_MEDIA = Path(os.environ.get("TMPDIR", "/tmp")) / f"{DB_NAME}.media"  # build_images' files

DOCUMENTS = 1_000_000
TOPICS = 50
RUNS = 80
RUN_DEPTH = 1000
POOL_PER_TOPIC = 2_400
JUDGED_PER_TOPIC = 2_000  # 50 × 2,000 = 100 k judgments
ASSESSORS = 50

SERVER_ENV = {
    "DATABASE_URL": DATABASE_URL,
    "SECRET_KEY": "bench-" + "k" * 40,
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1",
    "SECURE_SSL_REDIRECT": "0",
    "SESSION_COOKIE_SECURE": "0",
    "CSRF_COOKIE_SECURE": "0",
    "SECURE_HSTS_SECONDS": "0",
    "STATIC_COMPRESS": "0",
    "LOG_LEVEL": "WARNING",
    "DB_CONN_MAX_AGE": "600",
    "TOUCHSTONE_VAR_DIR": str(IMAGE_MEDIA),  # its uploads/ is MEDIA_ROOT: the image files judge_http.py --images serves
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reuse", action="store_true", help="measure on the database built by an earlier run")
    parser.add_argument("--assessors", type=int, default=ASSESSORS)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (after a 5 s warm-up)")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"), help="seconds between steps")
    parser.add_argument("--small", action="store_true", help="a quick trial of the script: 150 k documents, 2 runs (not the benchmark)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker (3×2 did best on 2 CPUs)")
    args = parser.parse_args()

    if args.small:
        global DOCUMENTS, RUNS
        DOCUMENTS, RUNS = 150_000, 2
    os.environ.update(SERVER_ENV)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "touchstone.settings")
    sys.path.insert(0, str(ROOT))
    if not args.reuse:
        build_database()
    import django

    django.setup()
    sessions = assessor_sessions(args.assessors)
    port = free_port()
    server = start_server(port, args.workers, args.threads)
    try:
        results = run_load(port, sessions, duration=args.duration, think=tuple(args.think))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return report(results, args)


# ------------------------------------------------------------------------------------------ data


def build_database() -> None:
    import psycopg2

    started = time.monotonic()
    admin = psycopg2.connect(f"{PG}/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {DB_NAME}")
        cursor.execute(f"CREATE DATABASE {DB_NAME}")
    admin.close()
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True, env=os.environ)
    import django

    django.setup()
    from django.db import connection, transaction

    with transaction.atomic():
        fill(connection)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"built {DB_NAME} in {time.monotonic() - started:.0f} s", flush=True)


def fill(connection) -> None:
    from django.contrib.auth.hashers import make_password

    from assessments.labels import PRESETS

    rng = random.Random(20220501)
    cursor = connection.cursor()
    password = make_password("bench-password")
    step("users", cursor, "accounts_user",
         ["id", "password", "is_superuser", "username", "first_name", "last_name", "email", "is_staff", "is_active", "date_joined", "role"],
         ([i, password, "f", f"assessor{i:02d}", "", "", "", "f", "t", "2022-05-01 00:00+00", "assessor"] for i in range(1, ASSESSORS + 1)))
    cursor.execute("INSERT INTO assessments_collection (id, slug, name) VALUES (1, 'clueweb12-bench', 'ClueWeb12 (bench)')")
    cursor.execute(
        "INSERT INTO assessments_campaign (id, slug, name, preset, scheme, guidelines, phase, training_round, collection_id,"
        " propagate_to_duplicates, seconds_per_judgment, agreement_threshold, overlap_share, created_at)"
        " VALUES (1, 'bench22', 'Touché 2022 Task 2 (bench)', 'touche-2022-task2', %s, %s, 'main', 1, 1, true, 30, 0.4, 0, now())",
        [json.dumps(PRESETS["touche-2022-task2"][1].to_json()), "Judge relevance 0-2, then quality and stance. " * 40],
    )
    objects = [(w, WORDS[(i * 7 + 3) % len(WORDS)]) for i, w in enumerate(WORDS[: TOPICS])]
    step("topics", cursor, "assessments_topic",
         ["id", "campaign_id", "number", "title", "description", "narrative", "compared_objects", "cause", "effect", "is_training", "pool_seed", "position"],
         ([t, 1, str(t), f"Which is better, {a} or {b}?", f"A user has to choose between {a} and {b}. " * 4,
           f"Highly relevant documents compare {a} and {b} with reasons. " * 3, json.dumps([a, b]), "", "", "f", t, t]
          for t, (a, b) in enumerate(objects, start=1)))
    templates = [long_body(rng, html=i % 3 == 0) for i in range(300)]
    per_topic = DOCUMENTS // TOPICS

    def documents():
        for d in range(1, DOCUMENTS + 1):
            pooled = (d - 1) % per_topic < POOL_PER_TOPIC
            topic = (d - 1) // per_topic
            a, b = objects[topic]
            if pooled:
                body_index = d % len(templates)
                is_html = body_index % 3 == 0
                lead = f"<p>{a} or {b}? Notes for document {d}.</p>" if is_html else f"{a} or {b}? Notes for document {d}.\n\n"
                body = lead + templates[body_index]
            else:
                is_html, body = False, " ".join(rng.choices(WORDS, k=30))
            yield [d, 1, doc_id(d), f"{a} and {b}: page {d}", body, "t" if is_html else "f",
                   f"http://www.example{d % 997}.com/{a}/{d}", "{}", "t", ""]

    step("documents", cursor, "assessments_document",
         ["id", "collection_id", "doc_id", "title", "body", "is_html", "url", "metadata", "has_text", "text_hash"], documents(), total=DOCUMENTS)
    step("runs", cursor, "assessments_run",
         ["id", "campaign_id", "tag", "team", "file_name", "has_stance", "line_count", "warnings", "uploaded_at"],
         ([r, 1, f"team{r % 23}-run{r}", f"team{r % 23}", f"run{r}.txt", "f", TOPICS * RUN_DEPTH, "[]", "2022-05-01 00:00+00"] for r in range(1, RUNS + 1)))

    def rankings():
        for r in range(1, RUNS + 1):
            for t in range(TOPICS):
                picks = rng.sample(range(per_topic), RUN_DEPTH)
                docs = ",".join(doc_id(t * per_topic + offset + 1) for offset in picks)
                ranks = ",".join(str(rank) for rank in range(1, RUN_DEPTH + 1))
                scores = ",".join(f"{100 - rank * 0.05:.3f}" for rank in range(1, RUN_DEPTH + 1))
                yield [r, t + 1, RUN_DEPTH, f"{{{docs}}}", f"{{{ranks}}}", f"{{{scores}}}", None, None]

    step("run rankings", cursor, "assessments_ranking",
         ["run_id", "topic_id", "length", "docs", "ranks", "scores", "stances", "by_rank"], rankings(), total=RUNS * TOPICS, batch=500)

    # Pools: the topic's pooled documents in a shuffled presentation order.
    pool = []  # (entry id, topic, document, order)
    for t in range(TOPICS):
        docs = [t * per_topic + i + 1 for i in range(POOL_PER_TOPIC)]
        rng.shuffle(docs)
        first = len(pool) + 1
        pool += [(first + order, t + 1, d, order) for order, d in enumerate(docs)]
    step("pool entries", cursor, "assessments_poolentry",
         ["id", "topic_id", "document_id", "order", "duplicate_of_id", "strategy", "added_at"],
         ([e, t, d, o, e - 1 if _is_twin(o) else None, "depth-k", "2022-05-01 00:00+00"] for e, t, d, o in pool))
    step("assignments", cursor, "assessments_assignment",
         ["id", "topic_id", "assessor_id", "phase", "scope", "round", "active", "assigned_by_id", "created_at"],
         ([i, i, i, "main", "full", 1, "t", None, "2022-05-01 00:00+00"] for i in range(1, ASSESSORS + 1)))

    # Each assessor judged the first 2,000 of their topic's pool, in presentation order.
    judged = [(e, t, d, o) for e, t, d, o in pool if o < JUDGED_PER_TOPIC and t <= ASSESSORS]
    labels = []
    for _, _, _, o in judged:  # a twin carries its original's label, as propagation left it
        labels.append(labels[-1] if _is_twin(o) else
                      (rng.choice((0, 0, 1, 2)), rng.choice((0, 1, 2)), rng.choice(("FIRST", "SECOND", "NEUTRAL", "NO"))))

    def values(rel: int, q: int, s: str) -> str:
        """The labels column: quality and stance only of relevant documents (the preset's condition)."""
        return json.dumps({"relevance": rel, "quality": q, "stance": s} if rel else {"relevance": rel})

    def judgments():
        for j, ((_, t, d, o), label) in enumerate(zip(judged, labels, strict=True), start=1):
            at = f"2022-05-{1 + o // 200:02d} {o % 24:02d}:{o % 60:02d}:00+00"
            source = "duplicate" if _is_twin(o) else "web"
            yield [j, t, d, t, "main", values(*label), "", "f", 20000 + o, source, 1, at, at]

    step("judgments", cursor, "assessments_judgment",
         ["id", "topic_id", "document_id", "assessor_id", "phase", "labels", "note", "flagged",
          "time_spent_ms", "source", "revision", "created_at", "updated_at"], judgments(), total=len(judged))
    step("judgment history", cursor, "assessments_judgmentevent",
         ["id", "judgment_id", "assessor_id", "revision", "labels", "note", "flagged", "time_spent_ms", "source", "at"],
         ([j, j, t, 1, values(*label), "", "f", 20000 + o, "duplicate" if _is_twin(o) else "web", "2022-05-01 00:00+00"]
          for j, ((_, t, _d, o), label) in enumerate(zip(judged, labels, strict=True), start=1)), total=len(judged))
    for table in ("accounts_user", "assessments_collection", "assessments_campaign", "assessments_topic", "assessments_document",
                  "assessments_run", "assessments_ranking", "assessments_poolentry", "assessments_assignment",
                  "assessments_judgment", "assessments_judgmentevent"):
        cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")


def _is_twin(order: int) -> bool:
    """One pooled document in 20 duplicates the one shown just before it (near-duplicate pages are
    common in web pools), so saves pay for propagating labels to twins."""
    return order % 20 == 19


def step(what: str, cursor, table: str, columns: list[str], rows, *, total: int | None = None, batch: int = 50_000) -> None:
    """COPY rows into table in batches, printing progress."""
    started = time.monotonic()
    copied = 0
    buffer = io.StringIO()
    raw = cursor.cursor  # psycopg2's cursor under Django's wrapper
    names = ", ".join(f'"{column}"' for column in columns)  # "order" is a keyword

    def flush():
        buffer.seek(0)
        raw.copy_expert(f"COPY {table} ({names}) FROM STDIN", buffer)
        buffer.seek(0)
        buffer.truncate()

    for row in rows:
        buffer.write("\t".join(_copy_value(v) for v in row))
        buffer.write("\n")
        copied += 1
        if copied % batch == 0:
            flush()
            if total:
                print(f"\r  {what}: {copied:,} / {total:,}", end="", flush=True)
    flush()
    print(f"\r  {what}: {copied:,} rows in {time.monotonic() - started:.1f} s", flush=True)


def _copy_value(value) -> str:
    if value is None:
        return "\\N"
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def doc_id(n: int) -> str:
    return f"clueweb12-{n // 100_000:04d}wb-{n // 1000 % 100:02d}-{n % 100_000:05d}"


WORDS = (
    "laptop desktop python php canon nikon linux windows train plane tea coffee cats dogs iphone android beer wine "
    "football basketball summer winter city country book film bike car rent buy gas electric nuclear solar "
    "price battery screen keyboard performance upgrade travel weight power quality support community speed cost "
    "the a of and to in is that for it with as on was be by this are or from at which but not have has more "
    "people use better than because when also can will one all would there their what about if them so some"
).split()


def long_body(rng: random.Random, *, html: bool) -> str:
    """A 2-12 KB page: paragraphs of words, lists and headings; HTML pages add the markup junk
    crawled pages carry (navigation, scripts, inline styles, images)."""
    parts = []
    for _ in range(rng.randint(6, 30)):
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(40, 80))) + "."
        if not html:
            parts.append(sentence)
            continue
        kind = rng.random()
        if kind < 0.15:
            parts.append(f"<h3>{' '.join(rng.choices(WORDS, k=5))}</h3>")
        elif kind < 0.3:
            parts.append("<ul>" + "".join(f'<li><a href="/x/{i}">{w}</a></li>' for i, w in enumerate(rng.choices(WORDS, k=8))) + "</ul>")
        elif kind < 0.35:
            parts.append('<script>var _gaq = _gaq || []; _gaq.push(["_trackPageview"]);</script><img src="/ad.gif" onerror="x()">')
        parts.append(f'<p style="margin:0">{sentence} <b>{rng.choice(WORDS)}</b> <span class="x">{rng.choice(WORDS)}</span></p>')
    separator = "\n" if html else "\n\n"
    body = separator.join(parts)
    return f'<div id="main"><div class="content">{body}</div></div>' if html else body


# ------------------------------------------------------------------------------------------ images

# An image campaign beside the text one, for bench/judge_http.py --images: the collection at Touché 2023 Task 3's
# size, its documents as import_images writes them, their files small and shared (what a request costs is serving
# some file from storage), in a media folder of the bench's own (the server's TOUCHSTONE_VAR_DIR).
IMAGE_CAMPAIGN = "bench23img"
IMAGES = 56_000
IMAGE_POOL_PER_TOPIC = 1_000
IMAGE_JUDGED_PER_TOPIC = 500


def build_images() -> None:
    """Add the image campaign (call after django.setup): IMAGES images, each with one web page (two for one in five)
    of 3,000 characters of text and a few searches, 50 topics with pools of IMAGE_POOL_PER_TOPIC (one in 20 a
    duplicate), and assessors imager01–imager50 on a topic each, with its first IMAGE_JUDGED_PER_TOPIC judged."""
    from django.db import connection, transaction

    started = time.monotonic()
    with transaction.atomic():  # a judgment's history row is due by the commit (a deferred check), and a build half done is none
        fill_images()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"added the image campaign {IMAGE_CAMPAIGN} in {time.monotonic() - started:.0f} s", flush=True)


def fill_images() -> None:
    from django.contrib.auth.hashers import make_password
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from PIL import Image, ImageDraw

    from accounts.models import User
    from assessments.models import Assignment, Document, Judgment, JudgmentEvent, PoolEntry, Topic
    from assessments.services.campaigns import create_campaign

    started = time.monotonic()
    rng = random.Random(20230501)
    campaign = create_campaign(slug=IMAGE_CAMPAIGN, name="Touché 2023 Task 3 (bench)", preset="touche-2023-task3")
    campaign.phase = "main"
    campaign.save(update_fields=["phase"])
    files = []
    for n in range(24):
        picture = Image.new("RGB", (800, 600), tuple(rng.randrange(256) for _ in range(3)))
        draw = ImageDraw.Draw(picture)
        for _ in range(30):
            x, y = rng.randrange(800), rng.randrange(600)
            draw.ellipse([x, y, x + rng.randrange(20, 300), y + rng.randrange(20, 200)], fill=tuple(rng.randrange(256) for _ in range(3)))
        out = io.BytesIO()
        picture.save(out, "WEBP", quality=80)
        name = f"images/{campaign.collection.slug}/bench/{n:02d}.webp"
        default_storage.delete(name)
        files.append(default_storage.save(name, ContentFile(out.getvalue())))
    topics = Topic.objects.bulk_create(
        Topic(campaign=campaign, number=str(t), title=f"Should {a} be banned?", description=f"Images for and against {a}. " * 4,
              narrative=f"An image is on topic if it shows {a} or an argument about it. " * 3, position=t)
        for t, a in enumerate(WORDS[:TOPICS], start=1)
    )

    def image(n: int) -> Document:
        text = " ".join(rng.choices(WORDS, k=600))[:3000]
        pages = [{"id": f"P{rng.getrandbits(64):016x}", "url": f"https://www.example{n % 997}.org/articles/{n}-{p}",
                  "queries": [{"query": f"{w} good", "topic": str(1 + n % TOPICS), "rank": rng.randint(1, 200)} for w in rng.choices(WORDS, k=3)],
                  "text": text} for p in range(2 if n % 5 == 0 else 1)]
        return Document(
            collection=campaign.collection, doc_id=f"I{n * 0x9E3779B97F4A7C15 % 2**64:016x}", url=f"https://www.example{n % 997}.org/{n}.jpg",
            has_text=True, metadata={"image": {"file": files[n % len(files)], "content_type": "image/webp", "width": 800, "height": 600,
                                               "phash": f"{rng.getrandbits(64):016x}", "thumbnail": None}, "pages": pages},
        )

    ids: list[int] = []
    for first in range(0, IMAGES, 2000):
        ids += [d.pk for d in Document.objects.bulk_create([image(n) for n in range(first, min(first + 2000, IMAGES))])]
    print(f"  images: {IMAGES:,} documents in {time.monotonic() - started:.0f} s", flush=True)
    password = make_password("bench-password")
    for t, topic in enumerate(topics):
        docs = ids[t * IMAGE_POOL_PER_TOPIC:(t + 1) * IMAGE_POOL_PER_TOPIC]
        rng.shuffle(docs)
        entries = PoolEntry.objects.bulk_create(PoolEntry(topic=topic, document_id=d, order=o, strategy="depth-k") for o, d in enumerate(docs))
        for o, entry in enumerate(entries):
            entry.duplicate_of = entries[o - 1] if _is_twin(o) else None
        PoolEntry.objects.bulk_update(entries, ["duplicate_of"])
        user = User.objects.create(username=f"imager{t + 1:02d}", role="assessor", password=password)
        Assignment.objects.create(topic=topic, assessor=user, phase="main", scope="full")
        labels: list[dict] = []
        for o in range(IMAGE_JUDGED_PER_TOPIC):
            on_topic = rng.random() < 0.7
            labels.append(labels[-1] if _is_twin(o) else
                          {"ONTOPIC": 1, "PRO": rng.randrange(2), "CON": rng.randrange(2)} if on_topic else {"ONTOPIC": 0})
        judgments = Judgment.objects.bulk_create(
            Judgment(topic=topic, document_id=entries[o].document_id, assessor=user, phase="main", labels=labels[o],
                     time_spent_ms=20000 + o, source="duplicate" if _is_twin(o) else "web")
            for o in range(IMAGE_JUDGED_PER_TOPIC)
        )
        JudgmentEvent.objects.bulk_create(
            JudgmentEvent(judgment=j, assessor=user, revision=1, labels=j.labels, time_spent_ms=j.time_spent_ms, source=j.source)
            for j in judgments
        )


# ------------------------------------------------------------------------------------------ load


def assessor_sessions(count: int) -> list[dict]:
    """A logged-in session per assessor (as the login form would create) and where they resume."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from accounts.models import User
    from assessments.models import Assignment
    from assessments.selectors.queues import queue_position, resume_position

    sessions = []
    for user in User.objects.filter(role="assessor").order_by("pk")[:count]:
        store = SessionStore()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.create()
        assignment = Assignment.objects.get(assessor=user)
        position = resume_position(assignment)
        csrf = secrets.token_hex(16)  # 32 characters: a valid CSRF secret, sent as cookie and header
        sessions.append({
            "assignment": assignment.pk,
            "position": position,
            "total": queue_position(assignment, position).total,
            "cookie": f"sessionid={store.session_key}; csrftoken={csrf}",
            "csrf": csrf,
        })
    return sessions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, workers: int, threads: int) -> subprocess.Popen:
    ACCESS_LOG.unlink(missing_ok=True)
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "touchstone.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--threads", str(threads), "--keep-alive", "75", "--log-level", "warning",
         # Server time per request (%(D)s: microseconds from reading the request to the last byte sent).
         "--access-logfile", str(ACCESS_LOG), "--access-logformat", "%(m)s %(U)s %(s)s %(D)s"],
        cwd=ROOT, env=os.environ, start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                print(f"gunicorn on 127.0.0.1:{port} ({workers} workers × {threads} threads)", flush=True)
                return server
        except OSError:
            time.sleep(0.2)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit("gunicorn did not start")


ACCESS_LOG = Path(os.environ.get("TMPDIR", "/tmp")) / f"{DB_NAME}.access.log"
PAGE_DATA = re.compile(r'<script id="judge-data" type="application/json">(.*?)</script>', re.DOTALL)


def run_load(port: int, sessions: list[dict], *, duration: float, think: tuple[float, float]) -> dict:
    """Warm up (every assessor opens one page at once, so every worker and thread has loaded
    Django and opened its database connection), then measure `duration` seconds of work. The
    access-log offset is taken between the two, when no request is in flight, so server and
    client times cover the same requests."""
    results = {"page": [], "save": [], "errors": [], "seconds": duration}
    lock = threading.Lock()
    window = {}

    def begin() -> None:  # run once, by the last assessor to finish warming up
        window["stop"] = time.monotonic() + duration
        window["log_offset"] = ACCESS_LOG.stat().st_size
        results["load_before"] = os.getloadavg()[0]

    warmed_up = threading.Barrier(len(sessions), action=begin)

    def assessor(index: int, session: dict) -> None:
        rng = random.Random(index)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Cookie": session["cookie"], "Host": "127.0.0.1"}
        position = session["position"]

        def request(kind, method, url, body=None, extra=None, *, record=True):
            began = time.perf_counter()
            try:
                connection.request(method, url, body=body, headers={**headers, **(extra or {})})
                response = connection.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                with lock:
                    results["errors"].append(f"{kind} {url}: {exc!r}")
                return None
            elapsed = time.perf_counter() - began
            if response.status != 200:
                with lock:
                    results["errors"].append(f"{kind} {url}: HTTP {response.status} {content[:200]!r}")
                return None
            if record:
                with lock:
                    results[kind].append(elapsed)
            return content

        def page_url():
            return f"/work/{session['assignment']}/{position}/"

        request("page", "GET", page_url(), record=False)
        warmed_up.wait()
        time.sleep(rng.uniform(0, think[1]))  # assessors do not all start on the same tick
        while time.monotonic() < window["stop"]:
            page = request("page", "GET", page_url())
            if page is None:
                break
            data = json.loads(PAGE_DATA.search(page.decode()).group(1))
            time.sleep(rng.uniform(*think))
            relevance = rng.choice((0, 1, 2))
            # The page sends only what changed, with the revision it showed (0: not judged yet).
            seen = data["judgment"]
            values = {"relevance": relevance}  # the bench's campaign is Touché 2022 Task 2
            if relevance:
                values |= {"quality": rng.choice((0, 1, 2)), "stance": rng.choice(("FIRST", "SECOND", "NEUTRAL", "NO"))}
            elif seen:
                values |= {name: None for name in seen["labels"] if name != "relevance"}  # relevance 0 clears the details
            labels = {"labels": values, "time_spent_ms": rng.randint(5000, 60000), "base_revision": seen["revision"] if seen else 0}
            saved = request("save", "PATCH", data["saveUrl"], json.dumps(labels),
                            {"Content-Type": "application/json", "X-CSRFToken": session["csrf"]})
            if saved is None:
                break
            time.sleep(rng.uniform(*think))
            position = position % session["total"] + 1
        connection.close()

    threads = [threading.Thread(target=assessor, args=(i, s), daemon=True) for i, s in enumerate(sessions)]
    print(f"{len(sessions)} assessors: warm-up (one page each), then {duration:.0f} s measured ...", flush=True)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=duration + 120)
    results["log_offset"] = window.get("log_offset", 0)
    results["load_after"] = os.getloadavg()[0]
    return results


def server_times(offset: int) -> dict:
    """Seconds per request as gunicorn measured them, from the measured part of its access log."""
    times = {"page": [], "save": []}
    with ACCESS_LOG.open() as log:
        log.seek(offset)
        for line in log:
            method, _url, status, micros = line.split()
            if status == "200":
                times["page" if method == "GET" else "save"].append(int(micros) / 1e6)
    return times


def report(results: dict, args) -> int:
    def percentile(values, p):
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")

    def row(label, values):
        worst = max(values) if values else float("nan")
        print(f"{label:<24}{len(values):>7}{len(values) / results['seconds']:>7.1f}{percentile(values, 50) * 1000:>9.1f}"
              f"{percentile(values, 95) * 1000:>9.1f}{percentile(values, 99) * 1000:>9.1f}{worst * 1000:>9.1f}")

    server = server_times(results.get("log_offset", 0))
    print(f"\nJudge page and save at campaign scale ({DOCUMENTS:,} documents, {RUNS * TOPICS * RUN_DEPTH:,} run lines, "
          f"{TOPICS} topics × {POOL_PER_TOPIC:,} pooled, {TOPICS * JUDGED_PER_TOPIC:,} judgments)")
    print(f"{args.assessors} concurrent assessors, think time {args.think[0]:g}-{args.think[1]:g} s, gunicorn {args.workers}×{args.threads}, "
          f"{os.cpu_count()} CPUs, load average {results.get('load_before', float('nan')):.1f} → {results['load_after']:.1f}")
    print(f"{'':<24}{'count':>7}{'per s':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    row("judge page, server", server["page"])
    row("judge page, client", results["page"])
    row("save label, server", server["save"])
    row("save label, client", results["save"])
    print("(server: gunicorn's own time per request; client: the same requests timed by the assessors over loopback,")
    print(" which adds waiting for a free worker and the client's own scheduling)")
    print(f"errors: {len(results['errors'])}")
    for error in results["errors"][:10]:
        print("  " + error)
    ok = not results["errors"] and percentile(server["page"], 95) < 0.050 and percentile(server["save"], 95) < 0.030
    print("targets (server p95: judge page < 50 ms, save < 30 ms; no errors):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
