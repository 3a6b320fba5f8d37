#!/usr/bin/env python3
"""Parses an SVG with xml.etree (fails loudly if it is not well-formed XML) and reports on it.

  svg_probe.py frames FILE   one line per flame-graph frame:
                             depth<TAB>x<TAB>width<TAB>y<TAB>fill<TAB>shown text<TAB>name<TAB>title
  svg_probe.py texts FILE    every <text> element's text, one per line (graphviz SVG)
  svg_probe.py check FILE    just parse; prints the root tag
  svg_probe.py pngstats FILE decode a PNG (8-bit RGB/RGBA, stdlib only) and print
                             "width height warm_fraction distinct_colours" where warm pixels are
                             the flame palette's (red >= 200, blue <= 60, green <= 200)
Exit status 1 with a message on a parse error.
"""
import sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'


def png_stats(path):
    import struct
    import zlib
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        print('not a PNG')
        return 1
    pos, idat, width = 8, b'', 0
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
            if depth != 8 or ctype not in (2, 6):
                print('unsupported PNG type depth=%d color=%d' % (depth, ctype))
                return 1
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    warm, colours, i = 0, set(), 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        for x in range(0, stride, bpp * 2):  # every other pixel is plenty
            r, g, bl = line[x], line[x + 1], line[x + 2]
            colours.add((r, g, bl))
            if r >= 200 and bl <= 60 and g <= 200:
                warm += 1
        prev = line
    sampled = height * ((width + 1) // 2)
    print('%d %d %.4f %d' % (width, height, warm / float(sampled), len(colours)))
    return 0


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == 'pngstats':
        return png_stats(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print('XML parse error: %s' % e)
        return 1
    if mode == 'check':
        print(root.tag)
    elif mode == 'texts':
        for t in root.iter(NS + 'text'):
            print(''.join(t.itertext()))
    elif mode == 'frames':
        for g in root.iter(NS + 'g'):
            if g.get('class') != 'f':
                continue
            rect = g.find(NS + 'rect')
            text = g.find(NS + 'text')
            title = g.find(NS + 'title')
            print('\t'.join([g.get('data-d'), rect.get('x'), rect.get('width'), rect.get('y'),
                             rect.get('fill'), text.text or '', g.get('data-n'),
                             title.text or '']))
    else:
        print('unknown mode ' + mode)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
