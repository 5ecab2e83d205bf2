import json
import os
import zipfile
from pathlib import Path

import pytest

from assessments.formats.errors import FormatError
from assessments.formats.image_collection import (
    ImageRecord,
    PageQuery,
    count_images,
    open_image_collection,
    read_image_collection,
)

SAMPLE = "2023-task3-sample"
IMAGE = "I2b62b2335042df6d"
PAGE = "P899a9ae3403108f8"
PHASH = "1101100110011000000101101111110011100000101000101101101100100110"


def write_image(root: Path, image_id: str = IMAGE, *, shard: str | None = None, files: dict[str, bytes | None] | None = None,
                pages: dict[str, dict[str, bytes | None]] | None = None) -> Path:
    """An image folder of the collection's layout under root/images, with defaults for what is not given."""
    folder = root / "images" / (shard or image_id[:3]) / image_id
    given: dict[str, bytes | None] = {"image.webp": b"RIFF....WEBP", "image-url.txt": b"https://example.org/a.png", "image-phash.txt": PHASH.encode()}
    given.update(files or {})
    page_files = {PAGE: {}} if pages is None else pages
    for page, contents in page_files.items():
        defaults: dict[str, bytes | None] = {
            "page-url.txt": b"https://example.org/page",
            "rankings.jsonl": b'{"query":"lower voting age good","topic":"48","rank":45}\n',
            "snapshot/text.txt": b"Old enough to fight",
            "snapshot/image-xpath.txt": b"/HTML[1]/BODY[1]/IMG[1]\n",
            "snapshot/dom.html": b"<html></html>",
        }
        defaults.update(contents)
        given.update({f"pages/{page}/{name}": data for name, data in defaults.items()})
    for name, data in given.items():
        if data is None:
            continue
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def zipped(folder: Path, path: Path, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


def error_for(path: Path, **kwargs) -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(read_image_collection(path, **kwargs))
    return caught.value


# ---------------------------------------------------------------------------------------------------------
# The real sample


def expected_record(image_folder: Path) -> dict:
    """The sample's image folder read with nothing but the standard library, for comparison."""
    pages = []
    for page in sorted((image_folder / "pages").iterdir()):
        pages.append({
            "id": page.name,
            "url": (page / "page-url.txt").read_text().strip(),
            "queries": [json.loads(line) for line in (page / "rankings.jsonl").read_text().splitlines() if line.strip()],
            "text": (page / "snapshot" / "text.txt").read_text(),
            "xpaths": (page / "snapshot" / "image-xpath.txt").read_text().splitlines(),
        })
    return {"id": image_folder.name, "url": (image_folder / "image-url.txt").read_text().strip(),
            "phash": (image_folder / "image-phash.txt").read_text().strip(), "pages": pages}


def as_dict(record: ImageRecord) -> dict:
    return {
        "id": record.id, "url": record.url, "phash": record.phash,
        "pages": [
            {"id": page.id, "url": page.url, "text": page.text, "xpaths": list(page.xpaths),
             "queries": [{"query": q.query, "topic": q.topic, "rank": q.rank} for q in page.queries]}
            for page in record.pages
        ],
    }


def test_it_reads_the_50_real_images_with_their_urls_phash_and_pages(touche_data):
    sample = touche_data / SAMPLE
    folders = sorted(sample.glob("images/I*/I*"), key=lambda folder: folder.name)

    records = list(read_image_collection(sample))

    assert len(records) == 50 == count_images(sample)
    assert [record.id for record in records] == [folder.name for folder in folders]
    for record, folder in zip(records, folders, strict=True):
        assert as_dict(record) == expected_record(folder)
        assert record.image_member == f"images/{folder.parent.name}/{folder.name}/image.webp"
        assert record.image_bytes == (folder / "image.webp").stat().st_size
        assert record.phash_value == int(record.phash, 2) < 2**64
    first = next(r for r in records if r.id == IMAGE)
    assert first.url == "https://www.nationalww2museum.org/sites/default/files/2020-10/student-protests-26th-amendment.jpg"
    assert first.phash == PHASH
    (page,) = first.pages
    assert (page.id, page.url) == (PAGE, "https://www.nationalww2museum.org/war/articles/voting-age-26th-amendment")
    assert page.queries[:2] == [PageQuery("Should the voting age be lowered?", "48", 54), PageQuery("lower voting age quote", "48", 98)]
    assert page.xpath == "/HTML[1]/HEAD[1]/META[8]"
    assert sum(len(page.xpaths) == 2 for record in records for page in record.pages) == 10


def test_the_same_sample_reads_alike_from_a_zip_and_from_the_images_folder_itself(touche_data, tmp_path):
    sample = touche_data / SAMPLE
    archive = zipped(sample, tmp_path / "images.zip")

    from_folder = list(read_image_collection(sample))
    from_zip = list(read_image_collection(archive))
    from_images = list(read_image_collection(sample / "images"))

    assert from_zip == from_folder
    assert [r.image_member for r in from_images] == [r.image_member.removeprefix("images/") for r in from_folder]
    assert count_images(archive) == 50
    with open_image_collection(archive) as collection:
        member = from_zip[0].image_member
        with collection.open_member(member) as stream:
            assert stream.read() == (sample / member).read_bytes()


def test_it_never_opens_dom_html(touche_data, monkeypatch):
    with open_image_collection(touche_data / SAMPLE) as collection:
        opened: list[str] = []
        real_open = collection._tree.open
        monkeypatch.setattr(collection._tree, "open", lambda path: opened.append(path) or real_open(path))
        list(collection)

    assert opened and not [path for path in opened if not path.endswith(("-url.txt", "-phash.txt", ".jsonl", "text.txt", "xpath.txt"))]


# ---------------------------------------------------------------------------------------------------------
# Layouts refused, each naming the path


@pytest.mark.parametrize(
    ("image_id", "shard", "reason"),
    [
        ("I2b62b2335042df6", None, "folder name 'I2b62b2335042df6' is not I and 16 lowercase hex digits"),
        ("I2B62B2335042DF6D", "I2B", "folder name 'I2B' is not I and 2 hex digits"),
        ("I2B62B2335042DF6D", "I2b", "folder name 'I2B62B2335042DF6D' is not I and 16 lowercase hex digits"),
        ("I2b62b2335042df6d", "I2c", "image I2b62b2335042df6d is not in the folder I2b"),
    ],
)
def test_it_refuses_an_image_folder_not_named_as_the_layout_says(tmp_path, image_id, shard, reason):
    folder = write_image(tmp_path, image_id, shard=shard)

    error = error_for(tmp_path)

    assert reason in error.reason
    assert error.source in {str(folder), str(folder.parent)}


def test_it_refuses_a_page_folder_not_named_p_and_16_hex(tmp_path):
    folder = write_image(tmp_path, pages={"P899a9ae3403108f": {}})

    assert str(error_for(tmp_path)) == f"{folder}/pages/P899a9ae3403108f: folder name 'P899a9ae3403108f' is not P and 16 lowercase hex digits"


def test_it_refuses_an_image_folder_without_its_image(tmp_path):
    folder = write_image(tmp_path, files={"image.webp": None, "image.gif": b"GIF89a"})

    assert str(error_for(tmp_path)) == f"{folder}: image {IMAGE} has no image file (image.webp, image.png, image.jpg, image.jpeg)"


@pytest.mark.parametrize(
    ("files", "pages", "path", "reason"),
    [
        ({"image-url.txt": None}, None, "image-url.txt", "missing (or a folder where a file belongs)"),
        ({"image-phash.txt": None}, None, "image-phash.txt", "missing (or a folder where a file belongs)"),
        ({}, {PAGE: {"page-url.txt": None}}, f"pages/{PAGE}/page-url.txt", "missing (or a folder where a file belongs)"),
        ({"image-url.txt": b"  \n"}, None, "image-url.txt", "expected one URL on one line, got ''"),
        ({"image-url.txt": b"https://a\nhttps://b"}, None, "image-url.txt", "expected one URL on one line, got 'https://a\\nhttps://b'"),
        ({"image-url.txt": b"https://a\x00"}, None, "image-url.txt", "the file contains a NUL byte"),
    ],
)
def test_it_refuses_an_image_or_page_without_its_url_or_phash(tmp_path, files, pages, path, reason):
    folder = write_image(tmp_path, files=files, pages=pages)

    assert str(error_for(tmp_path)) == f"{folder}/{path}: {reason}"


def test_it_takes_a_png_or_jpeg_when_there_is_no_webp(tmp_path):
    write_image(tmp_path, files={"image.webp": None, "image.png": b"\x89PNG"})

    (record,) = read_image_collection(tmp_path)
    assert record.image_member == f"images/I2b/{IMAGE}/image.png"


@pytest.mark.parametrize(
    ("phash", "shown"), [(PHASH[:-1], PHASH[:-1]), (PHASH[:-1] + "2", PHASH[:-1] + "2"), ("", "")]
)
def test_it_refuses_a_phash_that_is_not_64_bits(tmp_path, phash, shown):
    folder = write_image(tmp_path, files={"image-phash.txt": phash.encode()})

    error = error_for(tmp_path)
    assert error.source == f"{folder}/image-phash.txt"
    assert "is not 64 characters 0 and 1" in error.reason


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"query":"q","topic":"48"', "not a JSON object: Expecting ',' delimiter"),
        (b'["q","48",1]', "not a JSON object with query, topic and rank"),
        (b'{"query":"q","topic":"48","rank":"1"}', "rank '1' is not a positive integer"),
        (b'{"query":"q","topic":"48","rank":0}', "rank '0' is not a positive integer"),
        (b'{"query":"q","rank":1}', "query and topic must be strings"),
        # PostgreSQL stores neither in text or jsonb: the import crashed as it wrote them (issue 26).
        (b'{"query":"q\\u0000 good","topic":"48","rank":1}', "the query contains a NUL character (\\u0000)"),
        (b'{"query":"q","topic":"4\\u00008","rank":1}', "the topic contains a NUL character (\\u0000)"),
        (b'{"query":"q\\ud800","topic":"48","rank":1}', "the query contains a lone surrogate (\\ud800–\\udfff), which is not text"),
    ],
)
def test_it_refuses_a_malformed_rankings_line_naming_it(tmp_path, line, reason):
    folder = write_image(tmp_path, pages={PAGE: {"rankings.jsonl": b'{"query":"q good","topic":48,"rank":1}\n\n' + line + b"\n"}})

    error = error_for(tmp_path)

    assert (error.source, error.line) == (f"{folder}/pages/{PAGE}/rankings.jsonl", 3)
    assert error.reason.startswith(reason)


def test_a_topic_written_as_a_number_reads_as_its_digits(tmp_path):
    write_image(tmp_path, pages={PAGE: {"rankings.jsonl": b'{"query":"q good","topic":48,"rank":1}'}})

    (record,) = read_image_collection(tmp_path)
    assert record.pages[0].queries == [PageQuery("q good", "48", 1)]


def test_it_bounds_the_text_it_reads(tmp_path):
    folder = write_image(tmp_path, pages={PAGE: {"snapshot/text.txt": b"x" * 2001}})

    with pytest.raises(FormatError) as caught, open_image_collection(tmp_path, max_text_bytes=2000) as collection:
        list(collection)
    error = caught.value
    assert str(error) == f"{folder}/pages/{PAGE}/snapshot/text.txt: the file has 2,001 bytes, more than the 2,000 read here"


def test_page_text_from_the_web_keeps_going_past_bad_bytes_but_urls_must_be_utf8(tmp_path):
    write_image(tmp_path, pages={PAGE: {"snapshot/text.txt": b"caf\xe9 \x00 ok"}})
    (record,) = read_image_collection(tmp_path)
    assert record.pages[0].text == "caf\ufffd \ufffd ok"

    folder = write_image(tmp_path, files={"image-url.txt": b"https://example.org/caf\xe9"})
    assert str(error_for(tmp_path)) == f"{folder}/image-url.txt: not UTF-8 text (byte 0xe9 at offset 23)"


def test_page_files_other_than_its_url_may_be_missing_and_dot_files_are_skipped(tmp_path):
    write_image(tmp_path, pages={PAGE: {"rankings.jsonl": None, "snapshot/text.txt": None, "snapshot/image-xpath.txt": None}})
    (tmp_path / "images" / ".DS_Store").write_bytes(b"\x00")
    (tmp_path / "topics.xml").write_text("<topics/>")

    (record,) = read_image_collection(tmp_path)
    assert (record.pages[0].queries, record.pages[0].text, record.pages[0].xpaths, record.pages[0].xpath) == ([], None, (), None)


def test_it_refuses_a_folder_without_images_and_a_broken_link(tmp_path):
    (tmp_path / "images").mkdir()
    assert str(error_for(tmp_path)) == f"{tmp_path}: no image folders (images/I<2 hex>/I<16 hex>/) in it"

    folder = write_image(tmp_path)
    (folder / "image-url.txt").unlink()
    os.symlink(folder / "nowhere.txt", folder / "image-url.txt")
    assert str(error_for(tmp_path)) == f"{folder}/image-url.txt: the file cannot be read (No such file or directory)"


def test_it_refuses_a_symbolic_link_that_leads_outside_but_follows_one_inside(tmp_path):
    root = tmp_path / "collection"
    folder = write_image(root)
    (tmp_path / "secret.txt").write_text("https://example.org/secret")
    (folder / "image-url.txt").unlink()
    os.symlink(tmp_path / "secret.txt", folder / "image-url.txt")

    error = error_for(root)
    assert (error.source, error.reason) == (f"{folder}/image-url.txt", "a symbolic link that leads outside the collection")

    (folder / "image-url.txt").unlink()
    os.symlink(folder / "pages" / PAGE / "page-url.txt", folder / "image-url.txt")
    (record,) = read_image_collection(root)
    assert record.url == "https://example.org/page"


# ---------------------------------------------------------------------------------------------------------
# Zip files


def test_it_reads_a_small_collection_from_a_zip(tmp_path):
    write_image(tmp_path / "folder")
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip")

    (record,) = read_image_collection(archive)
    assert (record.id, record.image_member, record.pages[0].queries[0].topic) == (IMAGE, f"images/I2b/{IMAGE}/image.webp", "48")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../x", "the path climbs out of the collection's root (..)"),
        ("images/I2b/../../x", "the path climbs out of the collection's root (..)"),
        ("/etc/x", "an absolute path, outside the collection's root"),
        ("C:/x", "an absolute path, outside the collection's root"),
        ("images\\..\\x", "the name contains a backslash"),
    ],
)
def test_it_refuses_a_zip_member_that_escapes_the_root(tmp_path, name, reason):
    write_image(tmp_path / "folder")
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip", extra={name: b"x"})

    error = error_for(archive)

    assert error.source == f"{archive}:{name}"
    assert error.reason.startswith(reason)


def test_it_refuses_a_symbolic_link_in_a_zip(tmp_path):
    archive = tmp_path / "c.zip"
    with zipfile.ZipFile(archive, "w") as out:
        link = zipfile.ZipInfo(f"images/I2b/{IMAGE}/image-url.txt")
        link.external_attr = 0o120777 << 16
        out.writestr(link, "/etc/passwd")

    assert str(error_for(archive)) == f"{archive}:images/I2b/{IMAGE}/image-url.txt: a symbolic link, which the collection may not hold"


def test_it_refuses_a_zip_without_the_image_and_a_file_that_is_no_zip(tmp_path):
    write_image(tmp_path / "folder", files={"image.webp": None})
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip")
    assert str(error_for(archive)) == f"{archive}:images/I2b/{IMAGE}: image {IMAGE} has no image file (image.webp, image.png, image.jpg, image.jpeg)"

    (tmp_path / "not.zip").write_text("hello")
    assert error_for(tmp_path / "not.zip").reason.startswith("neither a folder nor a readable zip file")


def test_a_damaged_zip_entry_is_refused_naming_it(tmp_path):
    write_image(tmp_path / "folder", files={"image-url.txt": b"https://example.org/" + b"a" * 200})
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip")
    data = bytearray(archive.read_bytes())
    at = data.index(b"https://example.org/aaaa")  # stored uncompressed: flip a byte so the CRC no longer matches
    data[at + 30] ^= 0x01
    archive.write_bytes(bytes(data))

    error = error_for(archive)
    assert error.source == f"{archive}:images/I2b/{IMAGE}/image-url.txt"
    assert error.reason.startswith("the file cannot be read (Bad CRC-32")


def test_a_damaged_image_entry_is_refused_naming_it_when_read(tmp_path):
    write_image(tmp_path / "folder", files={"image.webp": b"RIFF....WEBP" + b"b" * 200})
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip")
    data = bytearray(archive.read_bytes())
    data[data.index(b"bbbb") + 30] ^= 0x01
    archive.write_bytes(bytes(data))

    with pytest.raises(FormatError) as caught, open_image_collection(archive) as collection:
        for record in collection:
            collection.read_member(record.image_member, 1 << 20)
    assert caught.value.source == f"{archive}:images/I2b/{IMAGE}/image.webp"
    assert caught.value.reason.startswith("the file cannot be read (Bad CRC-32")


def test_a_zip_entry_larger_than_its_bound_is_refused(tmp_path):
    write_image(tmp_path / "folder", pages={PAGE: {"snapshot/text.txt": b"y" * 5000}})
    archive = zipped(tmp_path / "folder", tmp_path / "c.zip")

    with pytest.raises(FormatError) as caught, open_image_collection(archive, max_text_bytes=4096) as collection:
        list(collection)
    assert caught.value.source == f"{archive}:images/I2b/{IMAGE}/pages/{PAGE}/snapshot/text.txt"
