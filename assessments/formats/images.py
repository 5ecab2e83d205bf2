"""Check that an image file is what it must be before it is stored or served, and make its grid thumbnail.

Task 3 collections come from a web crawl, and a campaign's files may come from anyone, so a file named
``image.webp`` proves nothing: the real sample holds a PNG under that name, and a hostile one could hold SVG or HTML
with a script, which a browser runs if the file is ever served as what it claims or sniffed. `check_image`, run on
every image as a collection is imported, reads the file's bytes and decodes no pixel:

1. its format by its magic bytes: WebP, PNG or JPEG, or refused naming what its bytes look like (SVG, HTML, GIF, …);
2. its width × height from its header, bounded: a PNG of a few dozen bytes may declare 100,000 × 100,000 pixels
   (30 GB decoded), and Pillow's WebP reader allocates the whole canvas as it opens a file. The bound is this
   module's, not Pillow's global ``Image.MAX_IMAGE_PIXELS``, which any other code of the process may change or lift;
3. its container complete, so that a truncated file is refused as it is imported, naming it: a WebP holds the bytes
   its RIFF header declares and each chunk in them whole, with its picture (a VP8 key frame whose first partition
   fits, a VP8L bitstream, or animation frames holding one each); a PNG's chunks run whole, each checksum matching,
   from IHDR through image data to IEND; a JPEG's marker segments lead to a frame header, then scan data and an end
   marker.

Decoding is what a check cost before (Pillow decodes these files at some 90 a second a core, ten times slower than
the rest of an import), and what a complete container still hides is rare: data that is corrupt inside a whole
file. So pixels are decoded once, by `thumbnail`, in the job that makes the grid's thumbnails after the import
(services.imports.images.make_thumbnails), which marks an image that fails there as unreadable instead of serving
it. `thumbnail` bounds the size again as it opens the file, before Pillow decodes it, and relies on Pillow's
default of refusing truncated files (``ImageFile.LOAD_TRUNCATED_IMAGES`` false).

Pillow's lazy ``Image.open`` is not the header reader here: opening a 200 KB WebP costs it 2 ms (its reader sets up
libwebp's animation decoder), a tenth of a full decode, where reading the header and walking the chunks takes
microseconds.

Every refusal is a `FormatError(source, None, reason)`.
"""

from __future__ import annotations

import io
import struct
import zlib
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
    """Identify the image, bound its size and check its container, by its bytes alone (the module docstring); raise
    `FormatError` naming `source`. Its pixels are not decoded: what passes may still fail in `thumbnail`."""
    data = _bytes(data, source, max_bytes)
    fmt = _identified(data, source)
    declared = _declared_size(data, fmt)
    if declared is not None:
        _bound(declared, fmt, source, max_pixels)  # first: a bomb is named as one, whatever else is wrong with it
    try:
        _CONTAINERS[fmt](data)
    except _Incomplete as exc:
        raise FormatError(source, None, f"the {fmt} image cannot be decoded ({exc})") from None
    if declared is None:  # not reached: each container check requires the header the size is read from; for mypy
        raise FormatError(source, None, f"the {fmt} header does not give the image's size")
    return CheckedImage(fmt, CONTENT_TYPES[fmt], *declared)


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
    or JPEG (on white). The input is identified and bounded as `check_image` does, then decoded whole (a JPEG at the
    1/2, 1/4 or 1/8 scale that suffices): raises `FormatError` likewise, and for pixels that cannot be decoded."""
    data = _bytes(data, source, max_bytes)
    fmt = _identified(data, source)
    image = _opened(data, fmt, source, max_pixels)
    try:
        with image:
            image.thumbnail(size, Image.Resampling.LANCZOS)
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
        return _jpeg_headers(data)[0]
    if fmt == "PNG":
        if len(data) >= 24 and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        return None
    if fmt == "WEBP":
        chunk = data[12:16]
        if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == _VP8_START:
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8X" and len(data) >= 30:
            return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
        if chunk == b"VP8L" and len(data) >= 25 and data[20] == _VP8L_SIGNATURE:
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


class _Incomplete(Exception):
    """Why a file's container is not whole: `check_image` refuses it, naming the file."""


def _check_webp(data: bytes) -> None:
    # The RIFF size counts from byte 8. Bytes after it are tolerated, as libwebp does: they are not part of the image.
    end = 8 + int.from_bytes(data[4:8], "little")
    if end > len(data):
        raise _Incomplete(f"the file has {len(data):,} bytes where its RIFF header declares {end:,}: it is truncated")
    chunks = _riff_chunks(data, 12, end)
    if not chunks:
        raise _Incomplete("it holds no chunk")
    kind, at, size = chunks[0]
    if kind in (b"VP8 ", b"VP8L"):
        _check_bitstream(data, kind, at, size)
    elif kind != b"VP8X":
        raise _Incomplete(f"its first chunk is {_name(kind)}, not VP8, VP8L or VP8X")
    elif size < 10:
        raise _Incomplete("its VP8X chunk is shorter than 10 bytes")
    elif data[at] & 0x02:  # the animation flag: the pictures are in ANMF frames
        frames = [(at, size) for kind, at, size in chunks if kind == b"ANMF"]
        if not frames:
            raise _Incomplete("it is animated but holds no frame (ANMF)")
        for at, size in frames:
            if size < 16:
                raise _Incomplete("an animation frame (ANMF) is shorter than its 16-byte header")
            _check_picture(data, _riff_chunks(data, at + 16, at + size))
    else:
        _check_picture(data, chunks[1:])


def _riff_chunks(data: bytes, at: int, end: int) -> list[tuple[bytes, int, int]]:
    """(kind, where its data starts, its size) of each chunk from `at` to `end`, each checked to lie inside."""
    chunks = []
    while at < end:
        if at + 8 > end:
            raise _Incomplete(f"it ends inside a chunk header at byte {at:,}: it is truncated")
        kind, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if at + 8 + size > end:
            raise _Incomplete(f"its {_name(kind)} chunk at byte {at:,} runs past the end of its container: it is truncated")
        chunks.append((kind, at + 8, size))
        at += 8 + size + (size & 1)  # a chunk of odd size is padded to an even one
    return chunks


def _check_picture(data: bytes, chunks: list[tuple[bytes, int, int]]) -> None:
    picture = next(((kind, at, size) for kind, at, size in chunks if kind in (b"VP8 ", b"VP8L")), None)
    if picture is None:
        raise _Incomplete("it holds no picture (a VP8 or VP8L chunk)")
    _check_bitstream(data, *picture)


def _check_bitstream(data: bytes, kind: bytes, at: int, size: int) -> None:
    if kind == b"VP8L":
        if size < 5 or data[at] != _VP8L_SIGNATURE or data[at + 4] >> 5:
            raise _Incomplete("its VP8L chunk does not start with a lossless bitstream's header")
        return
    # A VP8 frame: a 3-byte tag (bit 0 clear for a key frame, the first partition's size in its top 19 bits), the
    # start code, then width and height; the first partition follows and must fit in the chunk.
    if size < 10 or data[at + 3:at + 6] != _VP8_START:
        raise _Incomplete("its VP8 chunk does not start with a frame header")
    tag = int.from_bytes(data[at:at + 3], "little")
    if tag & 1:
        raise _Incomplete("its VP8 frame is not a key frame, which a still picture must be")
    if 10 + (tag >> 5) > size:
        raise _Incomplete(f"its VP8 frame's first partition needs {10 + (tag >> 5):,} bytes of the chunk's {size:,}")


def _check_png(data: bytes) -> None:
    # Chunks: length (4 bytes, big-endian), type, data, CRC-32 of type and data. zlib.crc32 checks a 200 KB file in
    # some 50 µs, so every checksum is verified; the image data itself is only inflated when decoded.
    view = memoryview(data)
    at, end, image_data = 8, len(data), False
    while True:
        if at + 12 > end:
            raise _Incomplete("it ends before its IEND chunk: it is truncated")
        size, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8]
        if at + 12 + size > end:
            raise _Incomplete(f"its {_name(kind)} chunk at byte {at:,} runs past the end of the file: it is truncated")
        if at == 8 and (kind != b"IHDR" or size != 13):
            raise _Incomplete("its first chunk is not a 13-byte IHDR")
        if zlib.crc32(view[at + 4:at + 8 + size]) != int.from_bytes(data[at + 8 + size:at + 12 + size], "big"):
            raise _Incomplete(f"the checksum of its {_name(kind)} chunk at byte {at:,} does not match: it is corrupt")
        image_data = image_data or kind == b"IDAT"
        at += 12 + size
        if kind == b"IEND":
            break
    if not image_data:
        raise _Incomplete("it holds no image data (IDAT)")


def _check_jpeg(data: bytes) -> None:
    size, scan = _jpeg_headers(data)
    if scan is None:
        raise _Incomplete("it ends before its scan data: it is truncated")
    if size is None:
        raise _Incomplete("no frame header (SOF) gives its size before its scan data")
    # Inside entropy-coded data a 0xFF byte is followed by 0x00 or a restart marker, so an end marker found after
    # the first scan's header is the image's (bytes after it are tolerated, as decoders do).
    if data.find(b"\xff\xd9", scan) < 0:
        raise _Incomplete("it has no end marker (EOI) after its scan data: it is truncated")


_CONTAINERS = {"WEBP": _check_webp, "PNG": _check_png, "JPEG": _check_jpeg}
_VP8_START = b"\x9d\x01\x2a"
_VP8L_SIGNATURE = 0x2F
# Start-of-frame markers, which carry the image's size: 0xC0–0xCF but DHT (C4), JPG (C8) and DAC (CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_STANDALONE = frozenset(range(0xD0, 0xD9)) | {0x01}  # RSTn, SOI, TEM: no length follows


def _jpeg_headers(data: bytes) -> tuple[tuple[int, int] | None, int | None]:
    """The size in the first frame header and where the first scan's data starts (None for what is not found),
    walking the marker segments from the start."""
    size = None
    at, end = 2, len(data)
    while at + 4 <= end:
        if data[at] != 0xFF:
            return size, None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        at += 2
        if marker in _JPEG_STANDALONE:
            continue
        if marker == 0xD9:  # the end, before any scan
            return size, None
        length = int.from_bytes(data[at:at + 2], "big")
        if marker == 0xDA:
            return size, (at + length if at + length <= end else None)
        if marker in _JPEG_FRAMES and size is None:
            if at + 7 > end:
                return None, None
            height, width = struct.unpack(">HH", data[at + 3:at + 7])
            size = width, height
        at += length
    return size, None


def _name(kind: bytes) -> str:
    """A chunk's type for a message: its letters and digits (``VP8``, ``XMP``), or its bytes in hex when it has others."""
    text = kind.rstrip(b" \x00")
    return text.decode("ascii") if text.isalnum() else kind.hex(" ")


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"
