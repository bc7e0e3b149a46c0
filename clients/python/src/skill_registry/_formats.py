"""The formats whose check the Rust runtime makes in a way a general-purpose
library does not, written from their RFCs: the same grammars as the
TypeScript package's ``src/formats.js``, held to the runtime's answers by the
cross-language test (``tests/consumers.rs``)."""

from __future__ import annotations

import re
from typing import Callable

# RFC 3986, appendix A.
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = "!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT = f"{_PCHAR}*"
_SEGMENT_NZ = f"{_PCHAR}+"
_SEGMENT_NZ_NC = f"(?:[{_UNRESERVED}{_SUB_DELIMS}@]|{_PCT})+"
_H16 = "[0-9A-Fa-f]{1,4}"
_DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])"
_IPV4 = rf"{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "|".join(
    f"(?:{alternative})"
    for alternative in [
        f"(?:{_H16}:){{6}}{_LS32}",
        f"::(?:{_H16}:){{5}}{_LS32}",
        f"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
        f"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
        f"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
        f"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
        f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
        f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
        f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
    ]
)
_IP_LITERAL = rf"\[(?:{_IPV6}|v[0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\]"
_REG_NAME = f"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*"
_USERINFO = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*"
_AUTHORITY = f"(?:{_USERINFO}@)?(?:{_IP_LITERAL}|{_REG_NAME})(?::[0-9]*)?"
_PATH_ABEMPTY = f"(?:/{_SEGMENT})*"
_PATH_ABSOLUTE = f"/(?:{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
_QUERY = f"(?:{_PCHAR}|[/?])*"
_TAIL = rf"(?:\?{_QUERY})?(?:#{_QUERY})?"
_SCHEME = r"[A-Za-z][A-Za-z0-9+\-.]*"
_URI = f"{_SCHEME}:(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NZ}(?:/{_SEGMENT})*|){_TAIL}"
_RELATIVE_REF = f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_ABSOLUTE}|{_SEGMENT_NZ_NC}(?:/{_SEGMENT})*|){_TAIL}"

_uri = re.compile(f"(?:{_URI})")
_uri_reference = re.compile(f"(?:{_URI}|{_RELATIVE_REF})")
_uuid = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_ipv4 = re.compile(_IPV4)
_date = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def _is_date(s: str) -> bool:
    """RFC 3339 ``full-date``: a real day of the proleptic Gregorian calendar."""
    m = _date.fullmatch(s)
    if not m:
        return False
    year, month, day = (int(g) for g in m.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= month <= 12 and 1 <= day <= days[month - 1]


def _matches(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda s: pattern.fullmatch(s) is not None


#: Format checks by name, each taking a string.
FORMATS: dict[str, Callable[[str], bool]] = {
    "uri": _matches(_uri),
    "uri-reference": _matches(_uri_reference),
    "uuid": _matches(_uuid),
    "ipv4": _matches(_ipv4),
    "date": _is_date,
}


_ASCII_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_"}


def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """An ECMA-262 ``pattern`` (what JSON Schema's ``pattern`` is written in)
    as a Python regular expression with the same matches: ``$`` ends the
    input only (Python's also matches before a final newline), ``\\d`` and
    ``\\w`` are ASCII, named groups are spelled ``(?P<name>``."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            ascii_class = _ASCII_CLASSES.get(e.lower())
            if ascii_class and in_class and e.islower():
                out.append(ascii_class)
            elif ascii_class and not in_class:
                out.append(f"[{'^' if e.isupper() else ''}{ascii_class}]")
            else:
                out.append(c + e)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            # A leading `]` or `^]` is literal in Python, an empty class in ECMA: rare, kept.
        elif c == "$":
            c = r"\Z"
        elif pattern.startswith("(?<", i) and i + 3 < len(pattern) and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return re.compile("".join(out))
