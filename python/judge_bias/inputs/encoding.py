"""Is a file UTF-8 CSV text at all? Name what it is when it is not (UTF-16/32, gzip,
zip/xlsx, Parquet, binary) and where its first non-UTF-8 byte stands.
"""

from __future__ import annotations

import codecs
import gzip
import io
import zlib
from pathlib import Path
from typing import IO

from judge_bias.errors import InputError


class CsvFileError(InputError):
    """The file as a whole cannot be read as CSV text (encoding, compression, binary)."""


DAMAGED = (EOFError, gzip.BadGzipFile, zlib.error)


def damaged_error(exc: BaseException) -> CsvFileError:
    return CsvFileError(
        f"is a damaged or truncated gzip file ({exc}); compress it again or decompress it"
    )


def describe_bytes(head: bytes) -> str | None:
    """What a file that is not UTF-8 CSV text looks like, from its first bytes."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "UTF-32 text (it starts with a UTF-32 byte order mark)"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "UTF-16 text (it starts with a UTF-16 byte order mark)"
    if head.startswith(b"\x1f\x8b"):
        return "gzip-compressed"
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive (an .xlsx workbook is one)"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    # The header is text: zero bytes there mean UTF-16 or binary data (a value may
    # hold NULs, so only the first line is looked at).
    first = head[:4096].replace(b"\r", b"\n").split(b"\n", 1)[0]
    zeros = first.count(b"\x00")
    if zeros and zeros >= len(first) // 3:
        for order, half in (("little", first[1::2]), ("big", first[0::2])):
            if half and half.count(b"\x00") >= len(half) * 0.9:
                return f"UTF-16 ({order}-endian) text without a byte order mark"
        return "binary data (its first line is mostly zero bytes)"
    if zeros:
        return "binary data (its first line holds zero bytes)"
    return None


def _first_bytes(path: Path, n: int = 65536) -> bytes:
    opener = gzip.open if _is_gzip_name(path) else open
    try:
        with opener(path, "rb") as fh:
            return fh.read(n)
    except gzip.BadGzipFile as exc:
        raise CsvFileError(f"is named .gz but is not gzip-compressed ({exc})") from exc
    except EOFError as exc:
        raise CsvFileError("is a truncated gzip file") from exc


def _is_gzip_name(path: Path) -> bool:
    return path.name.lower().endswith(".gz")


def check_text(path: Path) -> None:
    """Raise CsvFileError when the file is not UTF-8 text (UTF-16, gzip, binary...)."""
    head = _first_bytes(path)
    what = describe_bytes(head)
    if what == "gzip-compressed" and not _is_gzip_name(path):
        raise CsvFileError(
            f"is gzip-compressed but named {path.name}; rename it to {path.name}.gz "
            "or decompress it"
        )
    if what is not None:
        raise CsvFileError(f"looks like {what}, not UTF-8 CSV text; save it as UTF-8 CSV")


def open_text(path: Path) -> IO[str]:
    """The file as UTF-8 text for the csv module (BOM dropped, line ends kept)."""
    if _is_gzip_name(path):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


def decode_error(path: Path, exc: UnicodeDecodeError) -> CsvFileError:
    """Where the first byte that is not UTF-8 is (the text layer reads ahead)."""
    line, offset, byte = _first_invalid_utf8(path)
    latin = " (it looks like Latin-1 or Windows-1252)" if byte >= 0x80 else ""
    return CsvFileError(
        f"is not valid UTF-8 at line {line} (byte offset {offset}, counted from 0): "
        f"byte 0x{byte:02X} cannot be "
        f"decoded{latin}; re-save the file as UTF-8"
    )


def _line_ends(data: bytes) -> int:
    """Line ends as the csv module counts them: CRLF, CR and LF each one."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def _first_invalid_utf8(path: Path) -> tuple[int, int, int]:
    """(line, 0-based byte offset, byte value) of the first byte that breaks UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    opener = gzip.open if _is_gzip_name(path) else open
    seen = b""  # every byte before the current chunk is counted in line/offset
    line, offset = 1, 0
    with opener(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                pending = len(exc.object) - len(chunk)  # bytes held from the last chunk
                bad = exc.start - pending
                before = (seen[bad:] if bad < 0 else b"") + chunk[: max(bad, 0)]
                # a CR ending the previous chunk and an LF starting this one are one end
                line += _line_ends(before) if bad >= 0 else -_line_ends(seen[bad:])
                return line, offset + bad, exc.object[exc.start]
            if not chunk:
                return line, offset, 0
            line += _line_ends(chunk) - (seen.endswith(b"\r") and chunk.startswith(b"\n"))
            offset += len(chunk)
            seen = chunk[-4:]
