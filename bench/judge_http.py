"""The judge page and a label save under crowd load, in the production shape, over real HTTP.

    .venv/bin/python bench/judge_http.py 200             # 200 assessors for 60 s (builds the database if missing)
    .venv/bin/python bench/judge_http.py 100 --build     # build the database again first
    .venv/bin/python bench/judge_http.py 50 --duration 30
    .venv/bin/python bench/judge_http.py 200 --full-pages  # every document a whole page, as if reloaded
    .venv/bin/python bench/judge_http.py 50 --images       # half of them judge images, beside the text ones

The database is bench/judge_page.py's (`touchstone_bench_judge`: 1 M documents, 4 M run lines, 50 topics with
pools of 2,400, 100 k judgments), with assessors added up to N: beyond its 50, each new one gets a whole topic
that others judge too (four assessors a topic at N = 200), starting from its first document.

The server is started as docker-compose.yml's `web` service starts it: its gunicorn command as written there
(workers, threads, keep-alive, timeouts), bound to a free 127.0.0.1 port instead of 0.0.0.0:8000, with its
session cache (CACHE_URL) and its Celery worker, both on this machine's Redis (BENCH_REDIS, database 3 unless
given). The app's settings are production's except what plain HTTP on loopback needs (no TLS redirect, no
secure-only cookies).

Each of the N simulated assessors is a thread with one keep-alive connection, as a browser tab has: it logs in
through the login form, finds its assignment through the API, opens the judge page where it resumes, then
loops as the page's script does: think 1–3 s, save a label (PATCH with the revision the page showed and the
page's CSRF token), think, open the next document (the same URL with htmx's header: the document's part, not the
whole page; with --full-pages the whole page every time, the worst case). Logins are not measured (each checks
a password with the production hasher).
After the warm-up (everyone logged in with one page open) `--duration` seconds are measured.

Printed: client and server p50/p95/p99/max per kind (server time: gunicorn's access log, %(D)s), errors,
dropped connections, and CPU: the gunicorn workers' CPU time over the window divided by the requests served in
it (app CPU per request, from /proc), the Celery worker's, this client's, and how busy the machine was.
A dropped connection is a kept-alive connection the server closed while the assessor was thinking: found
closed when the next request was due (a browser then opens a new one, silently but paying a new connection)
or failing as it was sent (a browser retries; so does this client, once, since saves are idempotent).
Exits 1 when a goal is missed: server p95 < 30 ms for both, client p95 < 50 ms, no errors, no dropped
connections, app CPU ≤ 5 ms a request. Loopback only; at most 400 assessors and 600 s.

`--images`: the judge page of an image answers as fast as a text document's. Half of the N assessors (`imager01`…)
judge images of an image campaign the builder adds to the same database (judge_page.build_images: 56,000 images
as an import stores them, 50 topics with pools of 1,000, half judged), the others text documents as above, on the
same server in the same window. An image assessor does what the page does: opens the document, then its image file
(the page's <img>, served through the app with its access check), saves the image scheme's labels (on topic, pro,
con). Printed beside the text rows: the image page, file and save, and image over text at p95; the goals above hold
for each, and the image page and save must answer within 1.2 × the text one's server p95 (+ 1 ms for noise).
"""

import argparse
import http.client
import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge_page  # noqa: E402  (the same database and its builder)

ROOT = judge_page.ROOT
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/3")
ACCESS_LOG = Path(os.environ.get("TMPDIR", "/tmp")) / "touchstone_bench_http.access.log"
PAGE_DATA = re.compile(r'<script id="judge-data" type="application/json">(.*?)</script>', re.DOTALL)
FORM_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
IMAGE_SRC = re.compile(r'id="judge-image" src="([^"]+)"')
ASSIGNMENT_URL = re.compile(r"/(?:api/)?work/(\d+)/")
GOALS = {"server p95 ms": 30, "client p95 ms": 50, "app CPU ms per request": 5}
AS_FAST = (1.2, 1.0)  # image p95 at most 1.2 × text p95 + 1 ms
# Who judges what: the user names' prefix and the campaign (judge_page's text one, and build_images').
CASTS = {"text": ("assessor", "bench22"), "image": ("imager", judge_page.IMAGE_CAMPAIGN)}
# Each kind of request measured, as a row of the report calls it.
KINDS = {"page": "judge page", "save": "save label", "image page": "image page", "image file": "image file",
         "image save": "image save"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("assessors", type=int, help="simulated assessors at once (10, 50, 100, 200; at most 400)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured after the warm-up (at most 600)")
    parser.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    parser.add_argument("--build", action="store_true", help="build the database again (judge_page.py's)")
    parser.add_argument("--workers", type=int, help="override the compose file's gunicorn --workers")
    parser.add_argument("--threads", type=int, help="override the compose file's gunicorn --threads")
    parser.add_argument("--full-pages", action="store_true", help="open every document as a whole page (a reload), "
                        "not as the page's script does")
    parser.add_argument("--images", action="store_true", help="half of the assessors judge images (an image campaign "
                        "is added to the database if missing)")
    args = parser.parse_args()
    if not 1 <= args.assessors <= 400 or not 0 < args.duration <= 600:
        parser.error("1–400 assessors, at most 600 s")

    os.environ.update(judge_page.SERVER_ENV)
    os.environ.update({"CELERY_BROKER_URL": REDIS, "DJANGO_SETTINGS_MODULE": "touchstone.settings"})
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    if "CACHE_URL" in compose["x-app"]["environment"]:
        os.environ["CACHE_URL"] = REDIS
    sys.path.insert(0, str(ROOT))
    if args.build or not database_exists():
        judge_page.build_database()
    import django

    django.setup()
    from assessments.models import Campaign

    if args.images and (args.build or not Campaign.objects.filter(slug=judge_page.IMAGE_CAMPAIGN).exists()):
        judge_page.build_images()
    imagers = args.assessors // 2 if args.images else 0
    cast = add_assessors(args.assessors - imagers, "text") + add_assessors(imagers, "image")

    port = free_port()
    server = start(gunicorn_command(compose, port, args), "gunicorn")
    worker_command = [c for c in compose["services"]["worker"]["command"] if not c.startswith("--loglevel")]
    worker = start([str(Path(sys.executable).parent / "celery"), *worker_command[1:], "--loglevel=WARNING"], "celery")
    try:
        wait_for_port(port)
        results = run_load(port, server.pid, worker.pid, cast, args)
    finally:
        for process in (server, worker):
            os.killpg(process.pid, signal.SIGTERM)
        for process in (server, worker):
            process.wait(timeout=60)
    return report(results, args)


# ------------------------------------------------------------------------------------------ setup


def database_exists() -> bool:
    import psycopg2

    with psycopg2.connect(f"{judge_page.PG}/postgres") as admin, admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [judge_page.DB_NAME])
        return cursor.fetchone() is not None


def add_assessors(count: int, kind: str) -> list[tuple[str, str, int]]:
    """Assessors of a kind (CASTS) up to `count`, each past the builder's 50 on a whole topic another already has;
    return (name, kind, assignment id) of the first `count`."""
    from django.contrib.auth.hashers import make_password

    from accounts.models import User
    from assessments.models import Assignment, Topic

    prefix, campaign = CASTS[kind]
    existing = User.objects.filter(role="assessor", username__startswith=prefix).count()
    if existing < count:
        password = User.objects.filter(username="assessor01").values_list("password", flat=True).get()
        topics = list(Topic.objects.filter(campaign__slug=campaign).order_by("pk"))
        for i in range(existing + 1, count + 1):
            user = User.objects.create(username=f"{prefix}{i:02d}", role="assessor", password=password or make_password("bench-password"))
            Assignment.objects.create(topic=topics[(i - 1) % len(topics)], assessor=user, phase="main", scope="full")
        print(f"added {prefix} {existing + 1}–{count}", flush=True)
    names = [f"{prefix}{i:02d}" for i in range(1, count + 1)]
    ids = dict(Assignment.objects.filter(assessor__username__in=names).values_list("assessor__username", "pk"))
    return [(name, kind, ids[name]) for name in names]


def gunicorn_command(compose: dict, port: int, args) -> list[str]:
    """docker-compose.yml's web command, on loopback, with an access log of server times."""
    command = [compose_value(part) for part in compose["services"]["web"]["command"]]
    assert command[0] == "gunicorn", command
    command[0] = str(Path(sys.executable).parent / "gunicorn")
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    for flag, value in (("--workers", args.workers), ("--threads", args.threads)):
        if value is not None:
            command[command.index(flag) + 1] = str(value)
    ACCESS_LOG.unlink(missing_ok=True)
    # %(D)s: microseconds from reading the request to sending the last byte.
    return [*command, "--access-logfile", str(ACCESS_LOG), "--access-logformat", "%(m)s %(U)s %(s)s %(D)s", "--log-level", "warning"]


def start(command: list[str], name: str) -> subprocess.Popen:
    print(f"{name}: {' '.join(Path(command[0]).name if i == 0 else c for i, c in enumerate(command))}", flush=True)
    # Static files are served from the finders here (no collectstatic): not worth a warning per process.
    env = {**os.environ, "PYTHONWARNINGS": "ignore:No directory at"}
    log = (ACCESS_LOG.parent / "touchstone_bench_http.celery.log").open("w") if name == "celery" else None  # its banner
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stdout=log, stderr=log)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start")


# ------------------------------------------------------------------------------------------ CPU


def compose_value(text: str) -> str:
    """A compose file's `${NAME:-default}` as docker compose fills it in: from the environment, else the default."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m[1]) or m[2], text)


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU of a process, from /proc/<pid>/stat (fields 14 and 15, after the command's parentheses)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0, 0.0
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def cpu_seconds(pid: int) -> float:
    return sum(cpu_times(pid))


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def cpu_snapshot(server_pid: int, worker_pid: int) -> dict:
    app = [cpu_times(p) for p in children(server_pid)]  # each worker's /proc read once for both figures
    return {
        "app": sum(map(sum, app)),
        "app system": sum(system for _, system in app),
        "celery": cpu_seconds(worker_pid) + sum(cpu_seconds(p) for p in children(worker_pid)),
        "client": sum(os.times()[:2]),
        "machine": machine_busy(),
        "at": time.monotonic(),
    }


# ------------------------------------------------------------------------------------------ load


class Browser:
    """One assessor's tab: one keep-alive connection, its cookies, and counts of connections the server dropped:
    found closed when the next request was due (`reconnects`) and lost as a request was sent (`lost`)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection: http.client.HTTPConnection | None = None
        self.cookies: dict[str, str] = {}
        self.reconnects = self.lost = 0

    def request(self, method: str, url: str, body: str | None = None, headers: dict | None = None) -> tuple[int, dict, bytes, float]:
        """Send one request (reconnecting as a browser does), and return status, headers, body and seconds taken."""
        if self.connection is not None and self._closed_by_server():
            self.reconnects += 1
            self.connection.close()
            self.connection = None
        headers = {"Host": "127.0.0.1", "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        for attempt in (1, 2):
            reused = self.connection is not None
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            began = time.perf_counter()
            try:
                self.connection.request(method, url, body=body, headers=headers)
                response = self.connection.getresponse()
                content = response.read()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.connection.close()
                self.connection = None
                if reused and attempt == 1:  # the server closed it as we sent: a browser retries on a new one
                    self.lost += 1
                    continue
                raise
            elapsed = time.perf_counter() - began
            for header in response.headers.get_all("Set-Cookie", []):
                for morsel in SimpleCookie(header).values():
                    self.cookies[morsel.key] = morsel.value
            if response.will_close:
                self.connection.close()
                self.connection = None
            return response.status, response.headers, content, elapsed
        raise AssertionError("unreachable")

    def _closed_by_server(self) -> bool:
        sock = self.connection.sock
        if sock is None:
            return True
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


def log_in(browser: Browser, username: str) -> str:
    """Log in through the form and open the assignment where it resumes; return the judge page's URL."""
    status, _, page, _ = browser.request("GET", "/accounts/login/")
    token = FORM_CSRF.search(page.decode()).group(1)
    form = urlencode({"username": username, "password": "bench-password", "csrfmiddlewaretoken": token})
    status, headers, _, _ = browser.request("POST", "/accounts/login/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 302 and "sessionid" in browser.cookies, f"{username}: login answered {status}"
    status, _, work, _ = browser.request("GET", "/api/work/")
    [assignment] = json.loads(work)
    status, headers, _, _ = browser.request("GET", f"/work/{assignment['id']}/")
    assert status == 302, f"{username}: resume answered {status}"
    return headers["Location"]


def chosen_labels(rng: random.Random, kind: str, seen: dict | None) -> dict:
    """What an assessor of `kind` sends: a random label of its campaign's scheme, clearing the details a label of the
    first dimension no longer asks (a text's relevance 0, an image off topic)."""
    values: dict[str, int | str | None]
    if kind == "image":  # Touché 2023 Task 3: on topic, then supports pro, supports con
        first, values = "ONTOPIC", {"ONTOPIC": rng.choice((0, 1, 1))}
        if values["ONTOPIC"]:
            values |= {"PRO": rng.choice((0, 1)), "CON": rng.choice((0, 1))}
    else:  # the text campaign is Touché 2022 Task 2
        first, values = "relevance", {"relevance": rng.choice((0, 1, 2))}
        if values["relevance"]:
            values |= {"quality": rng.choice((0, 1, 2)), "stance": rng.choice(("FIRST", "SECOND", "NEUTRAL", "NO"))}
    if not values[first] and seen:
        values |= {name: None for name in seen["labels"] if name != first}
    return values


def image_url(page: bytes) -> str:
    """The address of the image a judge page shows, as its <img> asks for it."""
    found = IMAGE_SRC.search(page.decode())
    assert found is not None, "a judge page without its image"
    return found[1]


def run_load(port: int, server_pid: int, worker_pid: int, cast: list[tuple[str, str, int]], args) -> dict:
    """Client times per kind of request (KINDS: "page", "save", "image page", "image file", "image save"), errors and
    dropped connections of `cast`'s assessors, and the window's access-log offsets and CPU counters."""
    results: dict = {**{kind: [] for kind in KINDS}, "errors": [], "reconnects": 0, "lost": 0, "seconds": args.duration,
                     "image assignments": {assignment for _, kind, assignment in cast if kind == "image"}}
    lock = threading.Lock()
    window: dict = {}
    logins = threading.Semaphore(8)  # password checks are slow by design: a few at a time
    think = tuple(args.think)

    def begin() -> None:  # by the last assessor to finish warming up, with no request in flight
        window["stop"] = time.monotonic() + args.duration
        window["log_offset"] = ACCESS_LOG.stat().st_size
        window["cpu_before"] = cpu_snapshot(server_pid, worker_pid)
        threading.Timer(args.duration, end).start()
        print(f"all {args.assessors} logged in; measuring {args.duration:.0f} s ...", flush=True)

    def end() -> None:  # the same instant for the access log and the CPU counters
        window["log_end"] = ACCESS_LOG.stat().st_size
        window["cpu_after"] = cpu_snapshot(server_pid, worker_pid)

    warmed_up = threading.Barrier(args.assessors, action=begin)

    def fail(what: str) -> None:
        with lock:
            results["errors"].append(what)

    def assessor(index: int) -> None:
        name, kind, _ = cast[index]
        rng = random.Random(index)
        browser = Browser(port)
        prefix = "image " if kind == "image" else ""
        try:
            with logins:
                url = log_in(browser, name)
            status, _, page, _ = browser.request("GET", url)
            assert status == 200, f"{url}: {status}"
            if kind == "image":  # as the page's <img> does
                status, _, _, _ = browser.request("GET", image_url(page))
                assert status == 200, f"image of {url}: {status}"
        except Exception as exc:  # a bench reports what failed and goes on with the others
            fail(f"warm-up of {name}: {exc!r}")
            warmed_up.abort()
            return
        browser.reconnects = browser.lost = 0
        try:
            warmed_up.wait()
        except threading.BrokenBarrierError:
            return
        assignment, position = (int(p) for p in url.strip("/").split("/")[1:3])
        # The page's script sends its first page's token with every save; later documents' parts carry none.
        csrf = json.loads(PAGE_DATA.search(page.decode()).group(1))["csrf"]
        navigate = {} if args.full_pages else {"HX-Request": "true", "Accept": "text/html"}
        time.sleep(rng.uniform(0, think[1]))  # assessors do not all start on the same tick
        while time.monotonic() < window["stop"]:
            data = json.loads(PAGE_DATA.search(page.decode()).group(1))
            time.sleep(rng.uniform(*think))
            seen = data["judgment"]
            labels = {"labels": chosen_labels(rng, kind, seen), "time_spent_ms": rng.randint(5000, 60000),
                      "base_revision": seen["revision"] if seen else 0}
            if not step(prefix + "save", browser, "PATCH", data["saveUrl"], json.dumps(labels),
                        {"Content-Type": "application/json", "X-CSRFToken": csrf}):
                break
            time.sleep(rng.uniform(*think))
            position = position % data["total"] + 1
            page = step(prefix + "page", browser, "GET", f"/work/{assignment}/{position}/", headers=navigate)
            if page is None or (kind == "image" and not step("image file", browser, "GET", image_url(page))):
                break
        with lock:
            results["reconnects"] += browser.reconnects
            results["lost"] += browser.lost
        browser.close()

    def step(kind: str, browser: Browser, method: str, url: str, body=None, headers=None) -> bytes | None:
        try:
            status, _, content, elapsed = browser.request(method, url, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            fail(f"{kind} {url}: {exc!r}")
            return None
        if status != 200:
            fail(f"{kind} {url}: HTTP {status} {content[:200]!r}")
            return None
        if time.monotonic() < window["stop"]:
            with lock:
                results[kind].append(elapsed)
        return content

    threads = [threading.Thread(target=assessor, args=(i,), daemon=True) for i in range(len(cast))]
    started = time.monotonic()
    print(f"{args.assessors} assessors logging in ...", flush=True)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.duration + 600)
    results["login_seconds"] = window.get("cpu_before", {}).get("at", time.monotonic()) - started
    results.update({k: window.get(k) for k in ("log_offset", "log_end", "cpu_before", "cpu_after")})
    return results


# ------------------------------------------------------------------------------------------ report


def server_times(offset: int, end: int, image_assignments: set[int]) -> dict:
    """Seconds per request as gunicorn measured them, for the requests it finished within the window, by kind."""
    times: dict = {**{kind: [] for kind in KINDS}, "other": 0}
    with ACCESS_LOG.open() as log:
        log.seek(offset)
        for line in log.read(end - offset).splitlines():
            method, url, status, micros = line.split()
            if status == "200" and method in ("GET", "PATCH"):
                found = ASSIGNMENT_URL.match(url)
                prefix = "image " if found and int(found[1]) in image_assignments else ""
                kind = "save" if method == "PATCH" else "file" if url.endswith("/image/") else "page"
                times[prefix + kind].append(int(micros) / 1e6)
            else:
                times["other"] += 1
    return times


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def report(results: dict, args) -> int:
    if results["cpu_before"] is None:
        print("the warm-up failed:", *results["errors"][:10], sep="\n  ")
        return 1
    server = server_times(results["log_offset"], results["log_end"], results["image assignments"])
    kinds = [kind for kind in KINDS if args.images or not kind.startswith("image")]
    before, after = results["cpu_before"], results["cpu_after"]
    served = sum(len(server[kind]) for kind in KINDS) + server["other"]
    app_ms = (after["app"] - before["app"]) / max(served, 1) * 1000
    busy = (after["machine"][0] - before["machine"][0]) / max(after["machine"][1] - before["machine"][1], 1)
    wall = after["at"] - before["at"]

    print(f"\nJudge page and save over HTTP, the production shape ({judge_page.DOCUMENTS:,} documents, "
          f"{judge_page.RUNS * judge_page.TOPICS * judge_page.RUN_DEPTH:,} run lines, {judge_page.TOPICS * judge_page.JUDGED_PER_TOPIC:,} "
          f"judgments before the run)")
    if args.images:
        print(f"and an image campaign ({judge_page.IMAGES:,} images, {judge_page.TOPICS} topics × {judge_page.IMAGE_POOL_PER_TOPIC:,} "
              f"pooled, {judge_page.TOPICS * judge_page.IMAGE_JUDGED_PER_TOPIC:,} judgments before the run); "
              f"{len(results['image assignments'])} of the assessors judge images")
    print(f"{args.assessors} assessors, think time {args.think[0]:g}-{args.think[1]:g} s, {args.duration:g} s measured "
          f"(logins took {results['login_seconds']:.0f} s), {os.cpu_count()} CPUs")
    print("each next document opened", "as a whole page (--full-pages)" if args.full_pages else
          "as the page's script opens it: its part of the page, with htmx's header")
    print(f"{'':<22}{'count':>7}{'per s':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for kind in kinds:
        for side, values in (("server", server[kind]), ("client", results[kind])):
            label = f"{KINDS[kind]}, {side}"
            print(f"{label:<22}{len(values):>7}{len(values) / args.duration:>7.1f}{percentile(values, 50) * 1000:>9.1f}"
                  f"{percentile(values, 95) * 1000:>9.1f}{percentile(values, 99) * 1000:>9.1f}{max(values, default=float('nan')) * 1000:>9.1f}")
    dropped = results["reconnects"] + results["lost"]
    print(f"errors: {len(results['errors'])}; dropped connections: {dropped} ({results['reconnects']} found closed when the "
          f"next request was due, {results['lost']} lost as a request was sent and retried); other responses: {server['other']}")
    for error in results["errors"][:10]:
        print("  " + error)
    system_ms = (after["app system"] - before["app system"]) / max(served, 1) * 1000
    print(f"CPU over the window: app {app_ms:.2f} ms a request ({system_ms:.2f} of it in the kernel; "
          f"{after['app'] - before['app']:.1f} s for {served} requests), "
          f"Celery worker {after['celery'] - before['celery']:.1f} s, this client {after['client'] - before['client']:.1f} s, "
          f"machine {busy:.0%} busy over {wall:.0f} s")

    p95 = {(side, kind): percentile(times[kind], 95) * 1000 for kind in kinds for side, times in (("server", server), ("client", results))}
    missed = [f"{side} {kind} p95 {v:.1f} ms" for (side, kind), v in p95.items() if not v < GOALS[f"{side} p95 ms"]]
    missed += [f"{len(results['errors'])} errors"] if results["errors"] else []
    missed += [f"{dropped} dropped connections"] if dropped else []
    missed += [f"app CPU {app_ms:.2f} ms a request"] if app_ms > GOALS["app CPU ms per request"] else []
    if args.images:
        ratios = {kind: p95["server", f"image {kind}"] / p95["server", kind] for kind in ("page", "save")}
        print("image over text, server p95: " + ", ".join(f"{KINDS[k]} {p95['server', f'image {k}']:.1f} / {p95['server', k]:.1f} ms "
                                                         f"= {r:.2f}×" for k, r in ratios.items()))
        factor, slack = AS_FAST
        missed += [f"image {kind} {ratios[kind]:.2f}× the text one's" for kind in ratios
                   if not p95["server", f"image {kind}"] <= factor * p95["server", kind] + slack]
    print("goals (server p95 < 30 ms, client p95 < 50 ms, no errors or dropped connections, app CPU ≤ 5 ms"
          + (f"; image page and save within {AS_FAST[0]:g}× the text ones' server p95 + {AS_FAST[1]:g} ms" if args.images else "") + "):",
          "met" if not missed else "MISSED: " + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
