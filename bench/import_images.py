"""How fast an image collection goes in, and in how much memory: N generated images of about 200 KB each in the
Touché Task 3 layout, through `services.imports.images.import_images` (what `manage.py import_images` and the
upload job run), then the thumbnail job that follows it in the background (`make_thumbnails`), at two sizes.

    flock /work/bench.lock .venv/bin/python bench/import_images.py [--images 1000 5000] [--kb 200] [--database NAME]

The collection is written into a temporary folder as the organisers' sample lays it out
(`images/I<2 hex>/I<16 hex>/{image.webp, image-url.txt, image-phash.txt, pages/P<16 hex>/{page-url.txt,
rankings.jsonl, snapshot/{text.txt, image-xpath.txt, dom.html}}}`): one page per image and a second for one in
five, page texts of 2–20 KB (the sample's median is 10 KB), and WebP images of photo-like content (gradients,
shapes and grain) at 800 × 600 to 1280 × 960 pixels, each about `--kb` KB; 48 distinct pictures are used in turn,
so most files are copies of another (decoding one costs the same).

For each size the database (`touchstone_bench_images` unless `--database`; dropped and migrated first) gets an image
campaign, then each step runs in a child process of its own (bench/peak_memory.py: `manage.py shell -c`, its peak
resident memory VmHWM): the import, timed inside the child from the call to its return, then the thumbnail job the
import queued (run by the bench, so that it is measured apart). Beside them, in the same run: the floor, `manage.py
check`'s peak (Django and the project before any image is read), and Pillow alone decoding the same files on one
core. The import checks each image by its bytes and decodes none; the thumbnail job decodes each once, on as many
threads as the process may use CPUs (its affinity and cgroup quota), so Pillow's rate times those CPUs is its ceiling.

Printed: images/s, MB/s and peak memory per step and size, the machine's CPUs and load average (other work on the
machine slows the figures), and the README's speed table row with this run's figures. Exits 1 when a goal is
missed: the import at ≥ 200 images/s at the largest size, and the peaks of the import and of the thumbnail job flat
in the number of images (the largest size's at most 10 MiB above the smallest's).
"""

import argparse
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.benchdb import ROOT, SERVER, recreate_database  # noqa: E402
from bench.peak_memory import run_manage  # noqa: E402

GOAL_RATE = 200  # images/s
FLAT_MIB = 10  # the largest size's import peak over the smallest's
PICTURES = 48
SIZES = ((800, 600), (1024, 768), (1200, 800), (1280, 960))
WORDS = (
    "vote age school uniform nuclear energy wind solar tax health vaccine price abortion death penalty gun control "
    "animal testing social media the of and to in a is that for it as was with be by on not this are or from at"
).split()

# Run in the child by `manage.py shell -c`: the step timed from call to return, its figures printed as JSON.
IMPORT = """
import json, time
from pathlib import Path
from assessments.models import Campaign
from assessments.services.imports.images import import_images
started = time.perf_counter()
summary = import_images(campaign=Campaign.objects.get(slug="bench"), path=Path({path!r}))
print(json.dumps({{"seconds": time.perf_counter() - started, "images": summary.counts["images"]}}))
"""
THUMBNAILS = """
import json, time
from assessments.models import Campaign
from assessments.services.imports.images import DECODERS, make_thumbnails
started = time.perf_counter()
summary = make_thumbnails(campaign=Campaign.objects.get(slug="bench"))
print(json.dumps({{"seconds": time.perf_counter() - started, "images": summary.counts["thumbnails"], "threads": DECODERS}}))
"""


def pictures(kb: int, seed: int = 3) -> list[bytes]:
    """WebP files of photo-like content, each about `kb` KB: the grain is tuned per picture to reach the size."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(seed)
    made = []
    for n in range(PICTURES):
        width, height = SIZES[n % len(SIZES)]
        y, x = np.mgrid[0:height, 0:width].astype(np.float32)
        base = np.stack([
            128 + 100 * np.sin(x / rng.uniform(40, 200) + rng.uniform(0, 6)) * np.cos(y / rng.uniform(40, 200)),
            128 + 100 * np.sin((x + y) / rng.uniform(60, 300)),
            128 + 100 * np.cos(y / rng.uniform(30, 150) + rng.uniform(0, 6)),
        ], axis=-1)
        picture = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
        draw = ImageDraw.Draw(picture)
        for _ in range(60):
            x0, y0 = rng.randrange(width), rng.randrange(height)
            box = [x0, y0, x0 + rng.randrange(20, width // 3), y0 + rng.randrange(20, height // 3)]
            colour = tuple(rng.randrange(256) for _ in range(3))
            (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
        picture = picture.filter(ImageFilter.GaussianBlur(1.5))
        smooth = np.asarray(picture).astype(np.int16)
        grain = np.random.default_rng(n).normal(0, 1, smooth.shape)
        low, high = 0.0, 40.0
        for _ in range(7):  # bisect the grain's strength until the file is within 5 % of the size asked for
            strength = (low + high) / 2
            out = io.BytesIO()
            Image.fromarray(np.clip(smooth + grain * strength, 0, 255).astype(np.uint8)).save(out, "WEBP", quality=80)
            size = out.tell()
            if abs(size - kb * 1000) < kb * 50:
                break
            low, high = (strength, high) if size < kb * 1000 else (low, strength)
        made.append(out.getvalue())
    return made


def write_collection(root: Path, count: int, files: list[bytes], seed: int = 5) -> int:
    """Write `count` images in the lab's layout under root/images; return the bytes of the image files."""
    rng = random.Random(seed)
    total = 0
    for n in range(count):
        image_id = f"I{rng.getrandbits(64):016x}"
        folder = root / "images" / image_id[:3] / image_id
        folder.mkdir(parents=True)
        data = files[n % len(files)]
        (folder / "image.webp").write_bytes(data)
        total += len(data)
        (folder / "image-url.txt").write_text(f"https://www.example{n % 997}.org/media/{image_id[1:9]}/picture-{n}.jpg\n")
        (folder / "image-phash.txt").write_text(f"{rng.getrandbits(64):064b}\n")
        for p in range(2 if n % 5 == 0 else 1):
            page = folder / "pages" / f"P{rng.getrandbits(64):016x}"
            (page / "snapshot").mkdir(parents=True)
            (page / "page-url.txt").write_text(f"https://www.example{n % 997}.org/articles/{n}-{p}\n")
            topic = str(1 + n % 50)
            (page / "rankings.jsonl").write_text("".join(
                json.dumps({"query": " ".join(rng.choices(WORDS, k=4)) + rng.choice((" good", " anti", "")), "topic": topic,
                            "rank": rng.randint(1, 200)}) + "\n"
                for _ in range(rng.randint(1, 5))
            ))
            words = rng.randint(300, 3000)  # 2-20 KB of text
            (page / "snapshot" / "text.txt").write_text(" ".join(rng.choices(WORDS, k=words)))
            (page / "snapshot" / "image-xpath.txt").write_text(f"/HTML[1]/BODY[1]/DIV[{n % 9 + 1}]/IMG[1]\n")
            (page / "snapshot" / "dom.html").write_text("<html><body>" + "<div>x</div>" * 200 + "</body></html>")
    return total


def manage(database: str, *args: str) -> tuple[int, str]:
    """Run manage.py ARGS against `database` in a child process: (its peak resident KiB, what it printed)."""
    env = {**os.environ, "DATABASE_URL": f"{SERVER}/{database}", "SECRET_KEY": "bench-only", "LOG_LEVEL": "WARNING",
           # A broker that keeps the thumbnail job the import queues in this process, where no worker runs it: the
           # bench runs it itself, in a child of its own.
           "CELERY_BROKER_URL": "memory://", "DJANGO_SETTINGS_MODULE": "touchstone.settings"}
    done, peak = run_manage(ROOT, list(args), env)
    if done.returncode:
        sys.exit(f"manage.py {' '.join(args[:2])} failed:\n{done.stdout.decode()}\n{done.stderr.decode()}")
    return peak, done.stdout.decode()


def step(database: str, code: str, count: int) -> tuple[float, int, dict]:
    """Run IMPORT or THUMBNAILS in a child process: (seconds the service took, the child's peak resident KiB, what it
    printed). Every image must be stored, and get its thumbnail: these are all readable."""
    peak, printed = manage(database, "shell", "-c", code)
    figures = json.loads(printed.strip().splitlines()[-1])
    assert figures["images"] == count, figures
    return figures["seconds"], peak, figures


def decode_alone(files: list[bytes], count: int) -> float:
    """Images/s of Pillow opening and fully decoding `count` of the files in this process: the thumbnail job's floor
    cost (and the import's, before it checked images by their bytes alone)."""
    from PIL import Image

    started = time.perf_counter()
    for n in range(count):
        with Image.open(io.BytesIO(files[n % len(files)])) as picture:
            picture.load()
    return count / (time.perf_counter() - started)


def readme_cells(figures: dict[int, dict], small: int, large: int, *, kb: float, one_core: float, loads: list[float]) -> str:
    """The README's row for this bench, its What and Figure cells from this run's figures."""
    def both(what: str, value) -> str:
        return " / ".join(value(count, figures[count][what]) for count in (small, large))

    rate = both("import", lambda count, step: f"{count / step[0]:,.0f}")
    throughput = both("import", lambda count, step: f"{figures[count]['megabytes'] / step[0]:,.1f}")
    peak = both("import", lambda count, step: f"{step[1] / 1024:,.0f}")
    thumbnails = both("thumbnails", lambda count, step: f"{count / step[0]:,.0f}")
    thumbnail_peak = both("thumbnails", lambda count, step: f"{step[1] / 1024:,.0f}")
    threads = figures[large]["thumbnails"][2]["threads"]
    what = (f"Import an image collection in the Touché Task 3 layout: {small:,} and {large:,} generated WebP images of "
            f"{kb:.0f} KB (800 × 600 to 1280 × 960, one or two pages each), each step in a child process of its own, then "
            "the thumbnail job; beside Pillow decoding the same files on one core (in the same run)")
    figure = (f"import {rate} images/s ({throughput} MB/s), peak {peak} MiB at {small:,} / {large:,} images, each image "
              f"checked by its bytes; thumbnails (the job after it, which decodes each image once) {thumbnails} images/s, "
              f"{thumbnail_peak} MiB (load {min(loads):.1f}–{max(loads):.1f}). Pillow alone decodes them at "
              f"{one_core:,.0f} images/s on one core: the thumbnail job's {threads} threads make at most "
              f"{one_core * threads:,.0f}/s")
    return f"| {what} | `.venv/bin/python bench/import_images.py` | {figure} | ≥ {GOAL_RATE} images/s, memory flat |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, nargs=2, default=[1000, 5000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--kb", type=int, default=200, help="the size of each image file, in KB")
    parser.add_argument("--database", default="touchstone_bench_images", help="the bench's database (dropped first)")
    args = parser.parse_args()
    small, large = sorted(args.images)
    cpus = len(os.sched_getaffinity(0))

    started = time.perf_counter()
    files = pictures(args.kb)
    print(f"{PICTURES} pictures of {sum(map(len, files)) / len(files) / 1000:.0f} KB on average made in "
          f"{time.perf_counter() - started:.0f} s; {cpus} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    one_core = decode_alone(files, 400)
    floor = manage(args.database, "check")[0]
    figures: dict[int, dict] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="touchstone-images-") as folder:
        for count in (small, large):
            root = Path(folder) / str(count)
            began = time.perf_counter()
            megabytes = write_collection(root, count, files) / 1e6
            print(f"{count:,} images ({megabytes:,.0f} MB of image files) written in {time.perf_counter() - began:.0f} s", flush=True)
            recreate_database(args.database)
            manage(args.database, "migrate", "-v0")
            manage(args.database, "create_campaign", "bench", "--name", "Bench", "--preset", "touche-2023-task3")
            load = os.getloadavg()[0]
            loads.append(load)
            with tempfile.TemporaryDirectory(prefix="touchstone-media-") as media:
                os.environ["TOUCHSTONE_VAR_DIR"] = media  # MEDIA_ROOT is its uploads/
                imported = step(args.database, IMPORT.format(path=str(root)), count)
                thumbnails = step(args.database, THUMBNAILS.format(), count)
            figures[count] = {"megabytes": megabytes, "import": imported, "thumbnails": thumbnails}
            loads.append(os.getloadavg()[0])
            print(f"  import: {imported[0]:.1f} s = {count / imported[0]:,.0f} images/s, {megabytes / imported[0]:,.1f} MB/s, "
                  f"peak {imported[1] / 1024:,.0f} MiB (load average {load:.2f} before, {os.getloadavg()[0]:.2f} after)", flush=True)
            print(f"  thumbnails (the job after it): {thumbnails[0]:.1f} s = {count / thumbnails[0]:,.0f} images/s, "
                  f"peak {thumbnails[1] / 1024:,.0f} MiB", flush=True)

    threads = figures[large]["thumbnails"][2]["threads"]
    print(f"\nfloor: manage.py check peaks at {floor / 1024:,.0f} MiB; Pillow alone decodes these files at {one_core:,.0f} "
          f"images/s on one core, so the thumbnail job's {threads} threads make at most {one_core * threads:,.0f}/s "
          f"(load average now {os.getloadavg()[0]:.2f})")
    print(f"{'images':>8}{'import/s':>10}{'MB/s':>7}{'peak MiB':>10}{'thumbs/s':>10}{'peak MiB':>10}")
    for count, row in figures.items():
        (seconds, peak, _), (thumbnail_seconds, thumbnail_peak, _) = row["import"], row["thumbnails"]
        print(f"{count:>8,}{count / seconds:>10,.0f}{row['megabytes'] / seconds:>7,.1f}{peak / 1024:>10,.0f}"
              f"{count / thumbnail_seconds:>10,.0f}{thumbnail_peak / 1024:>10,.0f}")
    print("\nThe README's speed table, this row's cells:")
    print(readme_cells(figures, small, large, kb=sum(map(len, files)) / len(files) / 1000, one_core=one_core, loads=loads))
    rate = large / figures[large]["import"][0]
    missed = [f"import at {rate:,.0f} images/s"] if rate < GOAL_RATE else []
    for what in ("import", "thumbnails"):
        growth = (figures[large][what][1] - figures[small][what][1]) / 1024
        missed += [f"{what} peak {growth:+,.1f} MiB from {small:,} to {large:,} images"] if growth > FLAT_MIB else []
    print(f"goals (import ≥ {GOAL_RATE} images/s; import and thumbnail peaks within {FLAT_MIB} MiB from {small:,} to {large:,} "
          f"images): {'met' if not missed else 'MISSED: ' + ', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
