"""Read a Touché Task 3 image collection, folder or zip, one image at a time.

The layout (the 2022 collection on Zenodo and the organisers' sample; ir_datasets reads the same)::

    images/I<2 hex>/I<16 hex>/image.webp          the image (image.png or image.jpg in other archives)
                              image-url.txt       where the crawler found it
                              image-phash.txt     its 64-bit perceptual hash as 64 characters 0/1
                              pages/P<16 hex>/page-url.txt
                                              rankings.jsonl        {"query", "topic", "rank"}: a search that found the page
                                              snapshot/text.txt     the page's text
                                              snapshot/image-xpath.txt   where the image sits in the page, one per line

The tree may be at the root or under ``images/``. Anything else is never read: ``snapshot/dom.html`` (up to 790 KB
a page), ``nodes.jsonl``, screenshots and WARC archives, and files next to the tree (topics, queries). Images come in
order of id, each as an `ImageRecord` that names its image file (`image_member`) instead of holding its bytes: read
it with `ImageCollection.read_member` and check it with `formats.images.check_image`. Memory holds the zip's list of
names (about 450,000 for the 56,000 images of 2023) and one image's small files.

Refused with a `FormatError` that names the path (``archive.zip:member`` in a zip): a zip member whose name leaves
the root (``..``, an absolute path, a backslash) or is a symbolic link, a symbolic link in a folder that points
outside it; a folder whose name is not ``I`` + 2 hex digits, ``I`` + 16 lowercase hex digits under the folder of
its first two, or ``P`` + 16 hex digits under ``pages/``; an image folder without its image, URL or pHash; a pHash
that is not 64 characters 0/1; a rankings.jsonl line that is not such an object, or whose query or topic holds a
NUL or a lone surrogate (``\\u0000``, ``\\ud800``: not text, and PostgreSQL refuses them), naming the line; a file
larger than its bound (`MAX_TEXT_BYTES` for a page's text, `MAX_SMALL_BYTES` for the others), or not UTF-8, or a
damaged zip entry. Page texts are scraped from the web and only shown: invalid UTF-8 and NUL there become U+FFFD
instead of refusing the collection. Dot files (``.DS_Store``) are skipped.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from .errors import FormatError, shown
from .image_runs import IMAGE_ID

IMAGE_FILES = ("image.webp", "image.png", "image.jpg", "image.jpeg")  # the first one present is the image
MAX_TEXT_BYTES = 8 << 20  # snapshot/text.txt; the sample's largest is 95 KB
MAX_SMALL_BYTES = 1 << 20  # URLs, pHash, xpaths, rankings.jsonl: the sample's are under 1 KB

# A broken link or a vanished file (OSError), a damaged zip entry (BadZipFile: bad CRC; zlib.error, EOFError: bad data).
_READ_ERRORS = (OSError, zipfile.BadZipFile, zlib.error, EOFError)
_SHARD = re.compile(r"I[0-9a-f]{2}")
_PAGE = re.compile(r"P[0-9a-f]{16}")
_PHASH = re.compile(r"[01]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_DRIVE = re.compile(r"[A-Za-z]:")
_FOLDERS_KEPT = 64  # folders a _Folder remembers as inside: an image's are read one after another


@dataclass(frozen=True, slots=True)
class PageQuery:
    """A web search of the crawl that found the page: ``good``/``anti`` queries are the baseline's PRO/CON."""

    query: str
    topic: str
    rank: int


@dataclass(frozen=True, slots=True)
class PageRecord:
    id: str
    url: str
    queries: list[PageQuery]
    text: str | None  # None when the page has no snapshot text
    xpaths: tuple[str, ...]  # an image may appear more than once on a page (10 of the sample's 50 pages)

    @property
    def xpath(self) -> str | None:
        return self.xpaths[0] if self.xpaths else None


@dataclass(frozen=True, slots=True)
class ImageRecord:
    id: str
    image_member: str  # the image file's path from the collection's root, "/"-separated
    image_bytes: int  # its size as the folder or zip declares it
    url: str
    phash: str  # 64 characters 0/1
    pages: list[PageRecord]

    @property
    def phash_value(self) -> int:
        return int(self.phash, 2)


class ImageCollection:
    """An opened collection; use as a context manager (a zip stays open until it is left)."""

    def __init__(self, path: str | os.PathLike[str], *, source: str | None = None, max_text_bytes: int = MAX_TEXT_BYTES) -> None:
        self.source = source or str(path)
        self.max_text_bytes = max_text_bytes
        self._tree: _Folder | _Zip = _Folder(Path(path), self.source) if os.path.isdir(path) else _Zip(path, self.source)
        self._base = "images" if self._tree.entries("").get("images") else ""

    def __enter__(self) -> ImageCollection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._tree.close()

    def __iter__(self) -> Iterator[ImageRecord]:
        found = False
        for shard in self._folders(self._base, _SHARD, "I and 2 hex digits"):
            for image in self._folders(shard, IMAGE_ID, "I and 16 lowercase hex digits"):
                image_id = _split(image)[1]
                if image_id[1:3] != _split(shard)[1][1:]:
                    raise FormatError(self._tree.where(image), None, f"image {image_id} is not in the folder I{image_id[1:3]}")
                found = True
                yield self._image(image, image_id)
        if not found:
            # An empty tree is the wrong folder or zip, not a collection of no images.
            raise FormatError(self.source, None, "no image folders (images/I<2 hex>/I<16 hex>/) in it")

    def count_images(self) -> int:
        """How many image folders the tree has (a progress total: nothing is read or checked)."""
        tree = self._tree
        return sum(
            1
            for shard, is_dir in tree.entries(self._base).items() if is_dir and _SHARD.fullmatch(shard)
            for image, image_is_dir in tree.entries(_join(self._base, shard)).items() if image_is_dir and IMAGE_ID.fullmatch(image)
        )

    def open_member(self, member: str) -> BinaryIO:
        """A file of the collection by its path from the root (an `ImageRecord.image_member`)."""
        return self._tree.open(member)

    def read_member(self, member: str, limit: int) -> bytes:
        """At most `limit` + 1 bytes of a file of the collection (one more than `limit` tells a longer file), a damaged
        zip entry refused as a `FormatError` naming it, as the other files are."""
        try:
            with self._tree.open(member) as stream:
                return stream.read(limit + 1)
        except _READ_ERRORS as exc:
            raise FormatError(self._tree.where(member), None, f"the file cannot be read ({exc})") from None

    def _folders(self, folder: str, pattern: re.Pattern[str], expected: str) -> Iterator[str]:
        for name, is_dir in sorted(self._tree.entries(folder).items()):
            path = _join(folder, name)
            if name.startswith("."):
                continue
            if not is_dir:
                raise FormatError(self._tree.where(path), None, "a file where the layout has only folders")
            if not pattern.fullmatch(name):
                raise FormatError(self._tree.where(path), None, f"folder name {shown(name)} is not {expected}")
            yield path

    def _image(self, folder: str, image_id: str) -> ImageRecord:
        tree = self._tree
        entries = tree.entries(folder)
        member = next((_join(folder, name) for name in IMAGE_FILES if entries.get(name) is False), None)
        if member is None:
            raise FormatError(tree.where(folder), None, f"image {image_id} has no image file ({', '.join(IMAGE_FILES)})")
        url = self._line(_join(folder, "image-url.txt"), "URL", entries)
        phash_path = _join(folder, "image-phash.txt")
        phash = self._text(phash_path, MAX_SMALL_BYTES, listed=entries).strip()
        if not _PHASH.fullmatch(phash):
            raise FormatError(tree.where(phash_path), None, f"the pHash {shown(phash)} is not 64 characters 0 and 1")
        pages = []
        if entries.get("pages"):
            for page in self._folders(_join(folder, "pages"), _PAGE, "P and 16 lowercase hex digits"):
                pages.append(self._page(page))
        return ImageRecord(image_id, member, tree.size(member), url, phash, pages)

    def _page(self, folder: str) -> PageRecord:
        tree = self._tree
        entries = tree.entries(folder)
        url = self._line(_join(folder, "page-url.txt"), "URL", entries)
        queries = self._rankings(_join(folder, "rankings.jsonl"), entries) if entries.get("rankings.jsonl") is False else []
        snapshot = tree.entries(_join(folder, "snapshot")) if entries.get("snapshot") else {}
        text: str | None = None
        xpaths: tuple[str, ...] = ()
        if snapshot.get("text.txt") is False:
            text = self._text(_join(folder, "snapshot/text.txt"), self.max_text_bytes, scraped=True, listed=snapshot)
        if snapshot.get("image-xpath.txt") is False:
            lines = self._text(_join(folder, "snapshot/image-xpath.txt"), MAX_SMALL_BYTES, listed=snapshot).splitlines()
            xpaths = tuple(line.strip() for line in lines if line.strip())
        return PageRecord(_split(folder)[1], url, queries, text, xpaths)

    def _rankings(self, path: str, listed: dict[str, bool]) -> list[PageQuery]:
        source = self._tree.where(path)
        queries = []
        for lineno, line in enumerate(self._text(path, MAX_SMALL_BYTES, listed=listed).splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(source, lineno, f"not a JSON object: {exc.msg} at column {exc.colno}") from None
            if not isinstance(value, dict):
                raise FormatError(source, lineno, "not a JSON object with query, topic and rank")
            query, topic, rank = value.get("query"), value.get("topic"), value.get("rank")
            if isinstance(topic, int) and not isinstance(topic, bool):
                topic = str(topic)  # the sample writes "48"; an integer means the same
            if not isinstance(query, str) or not isinstance(topic, str) or not topic.strip():
                raise FormatError(source, lineno, "query and topic must be strings, the topic not empty")
            if "\\u" in line:  # an escape is the only way to a NUL or a lone surrogate, which PostgreSQL refuses
                _refuse_escapes(query, topic, source, lineno)
            if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
                raise FormatError(source, lineno, f"rank {shown(str(rank))} is not a positive integer")
            queries.append(PageQuery(query, topic, rank))
        return queries

    def _line(self, path: str, what: str, listed: dict[str, bool]) -> str:
        text = self._text(path, MAX_SMALL_BYTES, listed=listed).strip()
        if not text or "\n" in text or "\r" in text:
            raise FormatError(self._tree.where(path), None, f"expected one {what} on one line, got {shown(text)}")
        return text

    def _text(self, path: str, limit: int, *, listed: dict[str, bool], scraped: bool = False) -> str:
        """The text of the file at `path`, which `listed` (its folder's entries, as the caller read them) names."""
        tree = self._tree
        if listed.get(_split(path)[1]) is not False:
            raise FormatError(tree.where(path), None, "missing (or a folder where a file belongs)")
        size = tree.size(path)
        if size > limit:
            raise FormatError(tree.where(path), None, f"the file has {size:,} bytes, more than the {limit:,} read here")
        try:
            with tree.open(path) as stream:
                data = stream.read(limit + 1)
        except _READ_ERRORS as exc:
            raise FormatError(tree.where(path), None, f"the file cannot be read ({exc})") from None
        if len(data) > limit:  # a zip entry may declare less than it holds
            raise FormatError(tree.where(path), None, f"the file has more than the {limit:,} bytes read here")
        if scraped:
            return data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
        if b"\x00" in data:
            raise FormatError(tree.where(path), None, "the file contains a NUL byte")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(tree.where(path), None, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def open_image_collection(path: str | os.PathLike[str], *, source: str | None = None, max_text_bytes: int = MAX_TEXT_BYTES) -> ImageCollection:
    """Open a collection folder or zip file; `source` is how errors name it (the path by default)."""
    return ImageCollection(path, source=source, max_text_bytes=max_text_bytes)


def read_image_collection(path: str | os.PathLike[str], *, source: str | None = None) -> Iterator[ImageRecord]:
    """Yield the collection's images one at a time (see the module docstring), closing it at the end."""
    with open_image_collection(path, source=source) as collection:
        yield from collection


def count_images(path: str | os.PathLike[str]) -> int:
    """How many images the collection has, from names alone: a progress bar's total."""
    with open_image_collection(path) as collection:
        return collection.count_images()


def _refuse_escapes(query: str, topic: str, source: str, line: int) -> None:
    for what, text in (("query", query), ("topic", topic)):
        if "\x00" in text:
            raise FormatError(source, line, f"the {what} contains a NUL character (\\u0000)")
        if _SURROGATE.search(text):
            raise FormatError(source, line, f"the {what} contains a lone surrogate (\\ud800–\\udfff), which is not text")


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _split(path: str) -> tuple[str, str]:
    """(folder, name) of a "/"-separated path from the root; the folder of a top-level name is ""."""
    folder, _, name = path.rpartition("/")
    return folder, name


class _Folder:
    """A collection unpacked into a folder: symbolic links may point anywhere inside it, nowhere outside."""

    def __init__(self, root: Path, source: str) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.source = source
        # Folders found to be inside ("" the root), the last few: what is read in them needs no resolving again.
        self.inside: set[str] = {""}

    def where(self, path: str) -> str:
        return os.path.join(self.source, path) if path else self.source

    def entries(self, folder: str) -> dict[str, bool]:
        """The folder's names, each True for a folder (an absent folder has none)."""
        full = os.path.join(self.root, folder)
        if not os.path.isdir(full):
            return {}
        self._inside(folder, full)
        if len(self.inside) > _FOLDERS_KEPT:
            self.inside = {""}
        self.inside.add(folder)
        found = {}
        with os.scandir(full) as scan:
            for entry in scan:
                if entry.is_symlink():
                    self._inside(_join(folder, entry.name), entry.path)
                found[entry.name] = entry.is_dir()
        return found

    def size(self, path: str) -> int:
        try:
            return os.stat(os.path.join(self.root, path)).st_size
        except OSError as exc:
            raise FormatError(self.where(path), None, f"the file cannot be read ({exc.strerror})") from None

    def open(self, path: str) -> BinaryIO:
        full = os.path.join(self.root, path)
        self._inside(path, full)
        try:
            return open(full, "rb")
        except OSError as exc:
            raise FormatError(self.where(path), None, f"the file cannot be read ({exc.strerror})") from None

    def _inside(self, path: str, full: str) -> None:
        # In a folder found inside, a name that is no symbolic link is inside too: one lstat instead of
        # os.path.realpath's one per step of the path, a dozen times an image.
        if _split(path)[0] in self.inside and not os.path.islink(full):
            return
        real = os.path.realpath(full)
        if os.path.commonpath([real, self.real_root]) != self.real_root:
            raise FormatError(self.where(path), None, "a symbolic link that leads outside the collection")

    def close(self) -> None:
        pass


class _Zip:
    """A collection in a zip file, its names checked and indexed as it opens (the central directory only)."""

    def __init__(self, path: str | os.PathLike[str], source: str) -> None:
        self.source = source
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise FormatError(source, None, f"neither a folder nor a readable zip file ({exc})") from None
        self.folders: dict[str, dict[str, bool]] = {"": {}}
        self.infos: dict[str, zipfile.ZipInfo] = {}
        try:
            for info in self.zip.infolist():
                self._add(info)
        except FormatError:
            self.zip.close()
            raise

    def _add(self, info: zipfile.ZipInfo) -> None:
        name = info.filename
        problem = _unsafe(name)
        if problem is None and stat.S_ISLNK(info.external_attr >> 16):
            problem = "a symbolic link, which the collection may not hold"
        if problem is not None:
            raise FormatError(self.where(name), None, problem)
        path = name.rstrip("/")
        if path in self.infos or (not info.is_dir() and path in self.folders):
            raise FormatError(self.where(name), None, "the zip holds this name twice")
        parts = path.split("/")
        for depth in range(len(parts)):
            folder, child = "/".join(parts[:depth]), parts[depth]
            is_dir = depth < len(parts) - 1 or info.is_dir()
            siblings = self.folders.setdefault(folder, {})
            if siblings.get(child) is False and is_dir:
                raise FormatError(self.where(name), None, f"{shown(child)} is both a file and a folder in the zip")
            siblings[child] = siblings.get(child, False) or is_dir
            if is_dir:
                self.folders.setdefault(_join(folder, child), {})
        if not info.is_dir():
            self.infos[path] = info

    def where(self, path: str) -> str:
        return f"{self.source}:{path}" if path else self.source

    def entries(self, folder: str) -> dict[str, bool]:
        return self.folders.get(folder, {})

    def size(self, path: str) -> int:
        return self.infos[path].file_size

    def open(self, path: str) -> BinaryIO:
        info = self.infos.get(path)
        if info is None:
            raise FormatError(self.where(path), None, "missing")
        return cast(BinaryIO, self.zip.open(info))

    def close(self) -> None:
        self.zip.close()


def _unsafe(name: str) -> str | None:
    """Why a zip member's name could write or read outside the root when unpacked, or None."""
    if "\x00" in name:
        return "the name contains a NUL byte"
    if "\\" in name:
        return "the name contains a backslash, which some unzip tools take for a folder separator"
    if name.startswith("/") or _DRIVE.match(name):
        return "an absolute path, outside the collection's root"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return "the path climbs out of the collection's root (..)"
    if any(part in ("", ".") for part in parts):
        return "the path has an empty or '.' step"
    return None
