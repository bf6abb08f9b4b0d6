"""BlurHash from PyPI's pure-Python `blurhash` package, as an independent reference for Sources/Imaging/BlurHash.swift.

    blurhash_reference.py pinned                 hashes of the formula images pinned in BlurHashTests.swift
    blurhash_reference.py raw FILE WIDTH HEIGHT  hash (4x3) of WIDTH x HEIGHT pixels of 8-bit RGB in FILE
"""
import sys

import blurhash


def formula_image(width, height):
    # Same formula as BlurHashTests.formulaImage.
    return [[[(x * 7 + y * 13) % 256, (x * y + 40) % 256, 255 - (x * 3 + y * 5) % 256] for x in range(width)]
            for y in range(height)]


PINNED = [(32, 24, 4, 3), (17, 9, 4, 3), (1, 1, 4, 3), (64, 3, 4, 3), (32, 24, 1, 1), (32, 24, 9, 9), (20, 30, 3, 7)]


def main(argv):
    if argv[1:2] == ["pinned"]:
        for width, height, cx, cy in PINNED:
            print(width, height, cx, cy, blurhash.encode(formula_image(width, height), components_x=cx, components_y=cy))
    elif argv[1:2] == ["raw"] and len(argv) == 5:
        width, height = int(argv[3]), int(argv[4])
        with open(argv[2], "rb") as f:
            data = f.read()
        if len(data) != width * height * 3:
            sys.exit("expected %d bytes, got %d" % (width * height * 3, len(data)))
        rows = [[list(data[(y * width + x) * 3:(y * width + x) * 3 + 3]) for x in range(width)] for y in range(height)]
        print(blurhash.encode(rows, components_x=4, components_y=3))
    else:
        sys.exit(__doc__)


main(sys.argv)
