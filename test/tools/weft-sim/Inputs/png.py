#!/usr/bin/python3
"""Decodes the heatmap PNGs weft-sim --heatmaps writes, with nothing but the
standard library (struct, zlib): checks the signature, every chunk's CRC-32,
the header (8-bit RGB, no interlace) and the filter byte of every row, then
prints one line per image:

  busy.png 512x512 crc ok, 16x16 PEs of 32 px: 182 unused, 3 zero, 71 colored, top yes

counting each PE by the color at the centre of its square: white is a PE no
group covers, light grey a PE whose value is 0, anything else a value on the
color map; "top" says whether the map's largest color (#fde725) occurs.

  png.py DIR WIDTH HEIGHT      every DIR/*.png, in name order, for a fabric
                               of WIDTH x HEIGHT PEs
"""
import os
import struct
import sys
import zlib

UNUSED, ZERO, TOP = (255, 255, 255), (200, 200, 200), (253, 231, 37)


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: no PNG signature" % path)
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            raise ValueError("%s: bad CRC in %s" % (path, kind))
        chunks.append((kind, body))
        pos += 12 + length
    if chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        raise ValueError("%s: chunks %s" % (path, [k for k, _ in chunks]))
    width, height, depth, ctype, comp, filt, inter = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, ctype, comp, filt, inter) != (8, 2, 0, 0, 0):
        raise ValueError("%s: not 8-bit RGB" % path)
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    row = 3 * width + 1
    if len(raw) != row * height or any(raw[y * row] != 0 for y in range(height)):
        raise ValueError("%s: bad image data" % path)
    return width, height, raw


def main(argv):
    directory, pes_w, pes_h = argv[1], int(argv[2]), int(argv[3])
    for name in sorted(os.listdir(directory)):
        width, height, raw = decode(os.path.join(directory, name))
        px = width // pes_w
        counts = {"unused": 0, "zero": 0, "colored": 0}
        top = False
        for y in range(pes_h):
            for x in range(pes_w):
                cy, cx = y * px + px // 2, x * px + px // 2
                o = cy * (3 * width + 1) + 1 + 3 * cx
                c = tuple(raw[o:o + 3])
                counts["unused" if c == UNUSED else "zero" if c == ZERO else "colored"] += 1
                top |= c == TOP
        print("%s %dx%d crc ok, %dx%d PEs of %d px: %d unused, %d zero, %d colored, top %s"
              % (name, width, height, pes_w, pes_h, px, counts["unused"], counts["zero"],
                 counts["colored"], "yes" if top else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
