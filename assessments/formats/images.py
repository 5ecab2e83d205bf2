"""Check that an image file is what it must be before it is stored or served, and make its grid thumbnail.

Task 3 collections come from a web crawl, and a campaign's files may come from anyone, so a file named
``image.webp`` proves nothing: the real sample holds a PNG under that name, and a hostile one could hold SVG or HTML
with a script, which a browser runs if the file is ever served as what it claims or sniffed. An image is therefore

1. identified by its magic bytes, and refused unless they are WebP, PNG or JPEG, the refusal naming the file and what
   its bytes look like (SVG, HTML, GIF, …);
2. bounded in pixels from its header, read here before Pillow sees the file: a PNG of a few dozen bytes may declare
   100,000 × 100,000 pixels (30 GB decoded), and Pillow's WebP reader allocates the whole canvas as it opens a file.
   The size Pillow reads is checked again before decoding. The bound is this module's, not Pillow's global
   ``Image.MAX_IMAGE_PIXELS``, which any other code of the process may change or lift;
3. fully decoded by ``load()`` (a PNG first through ``verify()``, its chunk checksums, then opened afresh), so a
   truncated or corrupt file is refused here rather than failing in front of an assessor. This relies on Pillow's
   default of refusing truncated files (``ImageFile.LOAD_TRUNCATED_IMAGES`` false). Decoding is most of an import's
   time; Pillow's decoders release the GIL meanwhile, so threads may check several images at once.

Every refusal is a `FormatError(source, None, reason)`.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import BinaryIO, Literal

from PIL import Image, ImageOps

from .errors import FormatError

ImageFormat = Literal["WEBP", "PNG", "JPEG"]
CONTENT_TYPES: dict[str, str] = {"WEBP": "image/webp", "PNG": "image/png", "JPEG": "image/jpeg"}
MAX_PIXELS = 50_000_000  # 8,000 × 6,250: above any real image of the collection (the sample's largest is 5000 × 4168)
MAX_BYTES = 64 << 20  # the sample's largest file is 1.7 MB
THUMBNAIL_SIZE = (320, 320)
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# What Pillow raises for a file it cannot read: its plugins raise SyntaxError, struct.error, IndexError and TypeError
# from malformed headers (Image.open itself catches those four), OSError from the decoders, EOFError at a cut, and
# DecompressionBombError past its own global bound.
_DECODING_ERRORS = (
    OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError, TypeError, Image.DecompressionBombError,
)


@dataclass(frozen=True, slots=True)
class CheckedImage:
    format: ImageFormat
    content_type: str
    width: int
    height: int


def check_image(data: bytes | BinaryIO, *, source: str, max_pixels: int = MAX_PIXELS, max_bytes: int = MAX_BYTES) -> CheckedImage:
    """Identify, bound and fully decode an image (see the module docstring); raise `FormatError` naming `source`."""
    data = _bytes(data, source, max_bytes)
    fmt = _identified(data, source)
    image = _opened(data, fmt, source, max_pixels)
    try:
        with image:
            if fmt == "PNG":
                image.verify()
            else:
                image.load()  # opened once: verify() checks nothing in WebP or JPEG, and each open parses the header again
        if fmt == "PNG":
            # verify() leaves the image unusable: decode from a fresh open.
            with Image.open(io.BytesIO(data), formats=[fmt]) as decoded:
                decoded.load()
    except _DECODING_ERRORS as exc:
        raise FormatError(source, None, f"the {fmt} image cannot be decoded ({_reason(exc)})") from None
    return CheckedImage(fmt, CONTENT_TYPES[fmt], *image.size)


def declared_pixels(data: bytes) -> int | None:
    """Width × height as a WebP, PNG or JPEG file's header declares them, read without Pillow; None when the bytes
    are no such image or the header does not say. What decoding the file will cost, before it is checked."""
    fmt = _format(data)
    size = _declared_size(data, fmt) if fmt else None
    return size[0] * size[1] if size else None


def thumbnail(
    data: bytes | BinaryIO,
    *,
    size: tuple[int, int] = THUMBNAIL_SIZE,
    output: Literal["WEBP", "JPEG"] = "WEBP",
    source: str = "image",
    max_pixels: int = MAX_PIXELS,
    max_bytes: int = MAX_BYTES,
) -> bytes:
    """The image scaled to fit `size` (never enlarged), upright by its EXIF orientation, as WebP (transparency kept)
    or JPEG (on white). The input is identified and bounded as `check_image` does; raises `FormatError` likewise."""
    data = _bytes(data, source, max_bytes)
    fmt = _identified(data, source)
    image = _opened(data, fmt, source, max_pixels)
    try:
        with image:
            image.thumbnail(size, Image.Resampling.LANCZOS)  # a JPEG is decoded at 1/2, 1/4 or 1/8 scale when that suffices
            small = ImageOps.exif_transpose(image)
        transparent = small.mode in ("RGBA", "LA", "PA") or (small.mode == "P" and "transparency" in small.info)
        small = small.convert("RGBA" if transparent else "RGB")
    except _DECODING_ERRORS as exc:
        raise FormatError(source, None, f"the {fmt} image cannot be decoded ({_reason(exc)})") from None
    if output == "JPEG" and transparent:
        flat = Image.new("RGB", small.size, "white")
        flat.paste(small, mask=small.getchannel("A"))
        small = flat
    out = io.BytesIO()
    if output == "WEBP":
        small.save(out, "WEBP", quality=80, method=4)
    else:
        small.save(out, "JPEG", quality=85, optimize=True)
    return out.getvalue()


def _bytes(data: bytes | BinaryIO, source: str, max_bytes: int) -> bytes:
    if isinstance(data, bytes | bytearray | memoryview):
        data = bytes(data)
    else:
        data = data.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FormatError(source, None, f"the image is larger than {max_bytes:,} bytes")
    return data


def _format(data: bytes) -> ImageFormat | None:
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "WEBP"
    if data.startswith(_PNG_MAGIC):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    return None


def _identified(data: bytes, source: str) -> ImageFormat:
    fmt = _format(data)
    if fmt is None:
        raise FormatError(source, None, f"not a WebP, PNG or JPEG image: its bytes look like {looks_like(data)}")
    return fmt


def looks_like(data: bytes) -> str:
    """What a file that is not a WebP, PNG or JPEG image seems to be, from its first bytes, for a message."""
    if not data:
        return "an empty file"
    head = data[:1024]
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if b"<svg" in text or (text.startswith(b"<?xml") and b"<svg" in head.lower()):
        return "SVG (an XML drawing that may carry scripts)"
    if text.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<!--", b"<meta", b"<div")):
        return "HTML"
    if text.startswith(b"<?xml"):
        return "XML"
    for magic, what in _OTHER_MAGIC:
        if data.startswith(magic):
            return what
    if data[4:8] == b"ftyp":
        return "an ISO media file (AVIF, HEIC or MP4)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return f"no known format (it starts with {data[:8].hex(' ')})"
    return "text"


_OTHER_MAGIC = (
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"RIFF", "a RIFF file that is not WebP (WAV or AVI)"),
    (b"BM", "a BMP image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"%PDF", "a PDF document"),
    (b"\x1f\x8b", "gzip data"),
    (b"PK\x03\x04", "a zip archive"),
)


def _opened(data: bytes, fmt: ImageFormat, source: str, max_pixels: int) -> Image.Image:
    """The image opened by Pillow (its header read, nothing decoded yet), refused past `max_pixels` before Pillow
    sees the file and again at the size Pillow read (see the module docstring). The caller closes it."""
    declared = _declared_size(data, fmt)
    if declared is not None:
        _bound(declared, fmt, source, max_pixels)
    elif fmt == "WEBP":
        raise FormatError(source, None, "the WebP header does not give the image's size")
    try:
        image = Image.open(io.BytesIO(data), formats=[fmt])
    except _DECODING_ERRORS as exc:
        raise FormatError(source, None, f"the {fmt} image cannot be decoded ({_reason(exc)})") from None
    try:
        _bound(image.size, fmt, source, max_pixels)
    except FormatError:
        image.close()
        raise
    return image


def _bound(size: tuple[int, int], fmt: str, source: str, max_pixels: int) -> None:
    width, height = size
    if width < 1 or height < 1:
        raise FormatError(source, None, f"the {fmt} image declares an empty size, {width} × {height}")
    if width * height > max_pixels:
        raise FormatError(
            source, None, f"the {fmt} image declares {width:,} × {height:,} pixels, more than the {max_pixels:,} allowed;"
            " refused as a likely decompression bomb",
        )


def _declared_size(data: bytes, fmt: ImageFormat) -> tuple[int, int] | None:
    """Width and height from the file's header, or None when the header is too short or malformed to say."""
    if fmt == "JPEG":
        return _jpeg_size(data)
    if fmt == "PNG":
        if len(data) >= 24 and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        return None
    if fmt == "WEBP":
        chunk = data[12:16]
        if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8X" and len(data) >= 30:
            return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
        if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


# Start-of-frame markers, which carry the image's size: 0xC0–0xCF but DHT (C4), JPG (C8) and DAC (CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = frozenset(range(0xD0, 0xD9)) | {0x01}  # RSTn, SOI, TEM: no length follows


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The size in the first frame header, walking the marker segments that come before it."""
    at, end = 2, len(data)
    while at + 4 <= end:
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        at += 2
        if marker in _JPEG_STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # the end, or scan data, before any frame header
            return None
        if marker in _JPEG_FRAMES:
            if at + 7 > end:
                return None
            height, width = struct.unpack(">HH", data[at + 3:at + 7])
            return width, height
        at += int.from_bytes(data[at:at + 2], "big")
    return None


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"
