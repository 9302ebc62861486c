#!/usr/bin/env python3
"""Checks a figure of `sagerun plot` against the layout it wrote (--layout FILE):

    check_figure.py FIGURE LAYOUT.json [--series 'PANEL=NAME|NAME...']...

- the figure is a valid file of its format: a PNG whose IHDR is twice the layout's size and whose
  pixels decode (zlib, scanline filters) and are not all one colour; an SVG that parses as XML
  with the layout's width and height; a PDF with its header and trailer;
- the layout: every text lies inside the figure, no two texts overlap, no text covers a mark
  recorded as an obstacle (a bar, a box, a swatch), no text was left out for lack of room;
- every panel's box lies inside the figure, every text of a panel's group lies outside the
  panel's data area or inside it (never across its frame), and --series 'PANEL=A|B' names the
  series drawn in that panel, in order.
Exit 0 when all hold; otherwise each failure on stderr and exit 1."""
import json
import struct
import sys
import xml.dom.minidom
import zlib


def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(a, outer, eps=1e-6):
    return (a[0] >= outer[0] - eps and a[1] >= outer[1] - eps and a[2] <= outer[2] + eps
            and a[3] <= outer[3] + eps)


def png_pixels(data):
    """(width, height, rows of bytes) of an 8-bit RGBA/RGB PNG, scanline filters undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(kind + body) & 0xffffffff == crc, f"bad CRC in {kind}"
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
        if kind == b"IEND":
            break
    assert ihdr, "no IHDR"
    w, h, depth, ctype = ihdr[:4]
    assert depth == 8 and ctype in (2, 6), f"unexpected PNG format depth {depth} type {ctype}"
    bpp = 4 if ctype == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    assert len(raw) == h * (stride + 1), "IDAT size does not match IHDR"
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xff
            elif f == 2:
                line[i] = (line[i] + b) & 0xff
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def check_file(path, layout, errors):
    data = open(path, "rb").read()
    W, H = layout["width"], layout["height"]
    if path.endswith(".png"):
        w, h, rows = png_pixels(data)
        if (w, h) != (round(2 * W), round(2 * H)):
            errors.append(f"PNG is {w}x{h}, the layout {W}x{H} at 2x")
        if len(set(rows)) < 10:
            errors.append("PNG is blank: fewer than 10 distinct rows")
    elif path.endswith(".svg"):
        svg = xml.dom.minidom.parseString(data).documentElement
        if svg.tagName != "svg":
            errors.append(f"SVG root is <{svg.tagName}>")
        for attr, want in (("width", W), ("height", H)):
            got = float(svg.getAttribute(attr).replace("pt", "").replace("px", ""))
            if abs(got - want) > 0.5:
                errors.append(f"SVG {attr} {got}, the layout's {want}")
    elif path.endswith(".pdf"):
        if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-64:]:
            errors.append("not a complete PDF")


def check_layout(layout, series_args, errors):
    W, H = layout["width"], layout["height"]
    page = [0, 0, W, H]
    texts = layout["texts"]
    for t in texts:
        if not inside(t["box"], page):
            errors.append(f"text {t['text']!r} {t['box']} outside the {W}x{H} figure")
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if overlap(a["box"], b["box"]):
                errors.append(f"texts overlap: {a['text']!r} {a['box']} and {b['text']!r} {b['box']}")
        for o in layout["obstacles"]:
            if overlap(a["box"], o):
                errors.append(f"text {a['text']!r} {a['box']} covers a mark {o}")
    for t in layout["omitted"]:
        errors.append(f"text {t['text']!r} ({t['group']}) left out for lack of room")
    for p in layout["panels"]:
        if not inside(p["box"], page):
            errors.append(f"panel {p['name']} {p['box']} outside the figure")
        for t in texts:
            b = t["box"]
            if overlap(b, p["box"]) and not inside(b, p["box"]):
                errors.append(f"text {t['text']!r} {b} lies across the frame of panel {p['name']}")
    for arg in series_args:
        panel, names = arg.split("=", 1)
        got = [s["name"] for s in layout["series"] if s["panel"] == panel]
        if got != names.split("|"):
            errors.append(f"series of panel {panel}: {got}, expected {names.split('|')}")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    layout = json.load(open(argv[2]))
    series = [argv[i + 1] for i in range(3, len(argv) - 1) if argv[i] == "--series"]
    errors = []
    try:
        check_file(argv[1], layout, errors)
    except (AssertionError, zlib.error, struct.error, ValueError) as e:
        errors.append(f"{argv[1]}: {e}")
    check_layout(layout, series, errors)
    for e in errors:
        print(f"{argv[1]}: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
