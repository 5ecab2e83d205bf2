import io
import struct
import tracemalloc
import zlib

import pytest
from PIL import Image

from assessments.formats.errors import FormatError
from assessments.formats.image_collection import open_image_collection
from assessments.formats.images import CheckedImage, check_image, thumbnail

SAMPLE = "2023-task3-sample"
WEBP = "images/I2b/I2b62b2335042df6d/image.webp"  # 960 × 721 (`file`: "Web/P image, VP8 encoding, 960x721")
PNG_NAMED_WEBP = "images/Iba/Ibaa25a9245a3cd96/image.webp"  # `file`: "PNG image data, 1024 x 1284, 8-bit/color RGB"


def refusal(data: bytes, source: str = "images/I00/I0000000000000000/image.webp", **kwargs) -> FormatError:
    with pytest.raises(FormatError) as caught:
        check_image(data, source=source, **kwargs)
    assert caught.value.source == source
    return caught.value


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_declaring(width: int, height: int) -> bytes:
    """A PNG of a few dozen bytes whose header declares width × height RGB pixels (8 bits each)."""
    header = png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + png_chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + png_chunk(b"IEND", b"")


def webp_declaring(width: int, height: int) -> bytes:
    """An extended-format WebP header (VP8X) declaring a canvas of width × height."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


def jpeg(width: int, height: int, **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "JPEG", **save)
    return out.getvalue()


def webp(width: int, height: int, **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (30, 90, 200)).save(out, "WEBP", **save)
    return out.getvalue()


def corrupt_but_complete(data: bytes) -> bytes:
    """A simple lossy WebP whose container is whole (RIFF size, chunk, frame header, first partition's length) and
    whose coded data after the frame header is all 0xFF bytes, which libwebp fails to decode."""
    assert data[12:16] == b"VP8 "
    return data[:30] + b"\xff" * (len(data) - 30)


# ---------------------------------------------------------------------------------------------------------
# The real sample


def test_the_50_real_images_are_valid_and_the_png_named_webp_is_a_png(touche_data):
    found = {}
    with open_image_collection(touche_data / SAMPLE) as collection:
        for record in collection:
            with collection.open_member(record.image_member) as stream:
                found[record.image_member] = check_image(stream, source=record.image_member)

    assert len(found) == 50
    assert found[WEBP] == CheckedImage("WEBP", "image/webp", 960, 721)
    assert found[PNG_NAMED_WEBP] == CheckedImage("PNG", "image/png", 1024, 1284)
    assert sorted(c.format for c in found.values()).count("WEBP") == 49


def test_thumbnails_of_real_images_fit_the_grid_cell(touche_data):
    for member in (WEBP, PNG_NAMED_WEBP):
        data = (touche_data / SAMPLE / member).read_bytes()
        for output, fmt in (("WEBP", "WEBP"), ("JPEG", "JPEG")):
            small = thumbnail(data, output=output)
            with Image.open(io.BytesIO(small)) as im:
                assert im.format == fmt
                assert max(im.size) == 320 and min(im.size) > 200  # scaled, proportions kept


def test_a_thumbnail_is_upright_by_its_exif_orientation_and_never_enlarged():
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    with Image.open(io.BytesIO(thumbnail(jpeg(200, 100, exif=exif)))) as im:
        assert im.size == (100, 200)
    with Image.open(io.BytesIO(thumbnail(jpeg(40, 30), size=(320, 320)))) as im:
        assert im.size == (40, 30)


# ---------------------------------------------------------------------------------------------------------
# Hostile files, each refused naming the file


def test_a_png_declaring_100000_by_100000_pixels_is_refused_without_allocating(monkeypatch):
    bomb = png_declaring(100_000, 100_000)
    assert len(bomb) < 100
    # Pillow's own global bound is not what stops it: another part of the process could have lifted it.
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)

    tracemalloc.start()
    try:
        error = refusal(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert error.reason == (
        "the PNG image declares 100,000 × 100,000 pixels, more than the 50,000,000 allowed; refused as a likely decompression bomb"
    )
    assert peak < 1 << 20
    with pytest.raises(FormatError, match="decompression bomb"):
        thumbnail(bomb)


def test_an_image_just_past_the_bound_is_refused_and_one_within_it_passes_the_check_and_fails_to_decode():
    assert "8,000 × 6,251 pixels" in refusal(png_declaring(8000, 6251)).reason
    assert refusal(png_declaring(100, 100), max_pixels=9_999).reason.startswith("the PNG image declares 100 × 100 pixels")
    # Within the bound, the forged PNG is a whole container, every checksum right: the check, which inflates no data,
    # lets it through, and decoding it (the thumbnail job's) finds too little data.
    assert check_image(png_declaring(100, 100), source="a.png") == CheckedImage("PNG", "image/png", 100, 100)
    with pytest.raises(FormatError, match="cannot be decoded"):
        thumbnail(png_declaring(100, 100))


def test_a_webp_declaring_a_huge_canvas_is_refused_before_pillow_allocates_it(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)

    error = refusal(webp_declaring(16_000, 16_000))

    assert error.reason.startswith("the WEBP image declares 16,000 × 16,000 pixels")


def test_a_jpeg_whose_frame_header_declares_too_many_pixels_is_refused(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    data = bytearray(jpeg(64, 48))
    sof = data.index(b"\xff\xc0")
    assert struct.unpack(">HH", data[sof + 5:sof + 9]) == (48, 64)
    data[sof + 5:sof + 9] = struct.pack(">HH", 60_000, 60_000)

    assert refusal(bytes(data)).reason.startswith("the JPEG image declares 60,000 × 60,000 pixels")


SVG = b"""<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.cookie)</script></svg>
"""


@pytest.mark.parametrize(
    ("data", "looks_like"),
    [
        (SVG, "SVG (an XML drawing that may carry scripts)"),
        (b"\n  <svg onload=alert(1)>", "SVG (an XML drawing that may carry scripts)"),
        (b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>", "HTML"),
        (b"\xef\xbb\xbf<html><img src=x onerror=alert(1)>", "HTML"),
        (b"<?xml version='1.0'?><rss/>", "XML"),
        (b"GIF89a\x01\x00\x01\x00", "a GIF image"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", "a RIFF file that is not WebP (WAV or AVI)"),
        (b"%PDF-1.7", "a PDF document"),
        (b"\x00\x00\x00\x1cftypavif", "an ISO media file (AVIF, HEIC or MP4)"),
        (b"just some words", "text"),
        (b"\x00\x01\x02\xfe\xff", "no known format (it starts with 00 01 02 fe ff)"),
        (b"", "an empty file"),
    ],
)
def test_a_file_that_is_not_webp_png_or_jpeg_is_refused_saying_what_it_looks_like(data, looks_like):
    error = refusal(data)

    assert str(error) == f"images/I00/I0000000000000000/image.webp: not a WebP, PNG or JPEG image: its bytes look like {looks_like}"


def test_a_truncated_webp_is_refused(touche_data):
    data = (touche_data / SAMPLE / WEBP).read_bytes()

    for cut in (len(data) // 2, len(data) - 10):
        assert refusal(data[:cut]).reason.startswith("the WEBP image cannot be decoded")
    with pytest.raises(FormatError, match="cannot be decoded"):
        thumbnail(data[: len(data) // 2], source=WEBP)


def test_a_truncated_or_corrupt_png_is_refused(touche_data):
    data = (touche_data / SAMPLE / PNG_NAMED_WEBP).read_bytes()

    assert refusal(data[: len(data) // 2]).reason.startswith("the PNG image cannot be decoded")
    corrupt = bytearray(data)
    corrupt[len(data) // 2] ^= 0xFF  # a flipped byte inside an IDAT chunk: its CRC no longer matches
    assert refusal(bytes(corrupt)).reason.startswith("the PNG image cannot be decoded")


def test_a_truncated_jpeg_is_refused():
    data = jpeg(300, 200, quality=95)

    assert check_image(data, source="a.jpg") == CheckedImage("JPEG", "image/jpeg", 300, 200)
    assert refusal(data[: len(data) // 2], source="a.jpg").reason.startswith("the JPEG image cannot be decoded")


def test_a_file_beyond_the_byte_bound_is_refused_without_reading_it_all():
    stream = io.BytesIO(jpeg(10, 10) + b"\x00" * 2000)

    with pytest.raises(FormatError, match="larger than 1,000 bytes"):
        check_image(stream, source="big.jpg", max_bytes=1000)
    assert stream.tell() == 1001


# ---------------------------------------------------------------------------------------------------------
# The check reads bytes; decoding is the thumbnail's


def test_the_check_decodes_no_pixel_and_reads_the_real_images_sizes_from_their_headers(touche_data, monkeypatch):
    def no_pillow(*args, **kwargs):
        raise AssertionError("the check opened the file with Pillow")

    monkeypatch.setattr(Image, "open", no_pillow)
    with open_image_collection(touche_data / SAMPLE) as collection:
        checked = {r.image_member: check_image(collection.read_member(r.image_member, 1 << 26), source=r.image_member)
                   for r in collection}

    assert len(checked) == 50
    assert checked[WEBP] == CheckedImage("WEBP", "image/webp", 960, 721)
    assert checked[PNG_NAMED_WEBP] == CheckedImage("PNG", "image/png", 1024, 1284)


def test_a_webp_of_every_layout_passes_lossy_lossless_with_alpha_and_animated():
    frames = [Image.new("RGBA", (40, 30), (n * 60, 0, 0, 128)) for n in range(3)]
    animated = io.BytesIO()
    frames[0].save(animated, "WEBP", save_all=True, append_images=frames[1:], duration=100)

    for data, layout in ((webp(40, 30), b"VP8 "), (webp(40, 30, lossless=True), b"VP8L"),
                         (animated.getvalue(), b"VP8X")):
        assert data[12:16] == layout
        assert check_image(data, source="a.webp") == CheckedImage("WEBP", "image/webp", 40, 30)
        assert thumbnail(data)  # and decodes


def test_a_webp_whose_picture_chunk_is_cut_short_is_refused_though_its_riff_size_was_made_to_match():
    data = webp(300, 200, quality=95)
    cut = data[: len(data) - 40]
    cut = cut[:4] + struct.pack("<I", len(cut) - 8) + cut[8:]

    assert refusal(cut).reason == (
        "the WEBP image cannot be decoded (its VP8 chunk at byte 12 runs past the end of its container: it is truncated)"
    )
    # The chunk's size made to match as well: the frame's first partition no longer fits.
    short = cut[:16] + struct.pack("<I", 12) + cut[20:32]
    short = short[:4] + struct.pack("<I", len(short) - 8) + short[8:]
    assert refusal(short).reason.startswith("the WEBP image cannot be decoded (its VP8 frame's first partition needs")


def test_a_webp_with_no_picture_is_refused_and_bytes_after_its_riff_end_are_tolerated():
    assert refusal(webp_declaring(100, 100)).reason == "the WEBP image cannot be decoded (it holds no picture (a VP8 or VP8L chunk))"
    assert check_image(webp(40, 30) + b"\x00\x00", source="a.webp").width == 40  # libwebp ignores them too


def test_a_png_cut_at_a_chunk_boundary_or_without_image_data_is_refused():
    data = png_declaring(100, 100)
    iend = data.index(b"IEND") - 4
    assert refusal(data[:iend]).reason == "the PNG image cannot be decoded (it ends before its IEND chunk: it is truncated)"
    no_data = data[:8] + data[8:33] + data[iend:]
    assert refusal(no_data).reason == "the PNG image cannot be decoded (it holds no image data (IDAT))"


def test_a_jpeg_cut_before_its_scan_or_without_a_frame_header_is_refused():
    data = jpeg(64, 48)
    sos = data.index(b"\xff\xda")

    assert refusal(data[:sos + 4], source="a.jpg").reason == "the JPEG image cannot be decoded (it ends before its scan data: it is truncated)"
    sof = data.index(b"\xff\xc0")
    length = int.from_bytes(data[sof + 2:sof + 4], "big")
    assert refusal(data[:sof] + data[sof + 2 + length:], source="a.jpg").reason == (
        "the JPEG image cannot be decoded (no frame header (SOF) gives its size before its scan data)"
    )


def test_a_corrupt_but_complete_webp_passes_the_check_and_fails_to_decode():
    data = corrupt_but_complete(webp(64, 48))

    assert check_image(data, source="a.webp") == CheckedImage("WEBP", "image/webp", 64, 48)
    with pytest.raises(FormatError) as caught:
        thumbnail(data, source="images/img23/I00/I0000000000000000.webp")
    assert str(caught.value).startswith("images/img23/I00/I0000000000000000.webp: the WEBP image cannot be decoded (")
