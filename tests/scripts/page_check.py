#!/usr/bin/env python3
"""Helpers of report_page.sh (standard library only).

    page_check.py inject INDEX_HTML CHECK_HTML   copy the page with a script that reports, for each
                                                 <img>, whether it loaded, its natural and shown
                                                 size, and which pixels it drew
    page_check.py images DOM_FILE REPORT_DIR     check that report: every chart .svg in REPORT_DIR
                                                 is an <img> that loaded, is shown and drew ink
                                                 (in each model's colour where it has a legend)
    page_check.py png SCREENSHOT_PNG             check that a screenshot is not blank
Each check prints what it saw and exits 1 when the page does not show the charts.
"""
import json
import os
import re
import struct
import sys
import zlib

# The model colours of the charts (Okabe-Ito, src/report/palette.cpp), and which charts show them.
MODEL_COLOURS = ["#0072B2", "#D55E00", "#009E73"]
CHARTS_WITH_MODEL_COLOURS = {"loss_curves.svg", "outliers.svg", "quantization.svg", "attention_allocation.svg"}

PROBE = """<script>
addEventListener('load', function () {
  var colours = %s, lines = [];
  for (var img of document.images) {
    var line = 'IMG ' + img.getAttribute('src') + ' ' + (img.complete ? 'complete' : 'pending') + ' natural ' +
               img.naturalWidth + 'x' + img.naturalHeight;
    var box = img.getBoundingClientRect(), style = getComputedStyle(img);
    line += ' shown ' + (style.display === 'none' || style.visibility !== 'visible' ? 0 : Math.round(box.width)) +
            'x' + Math.round(box.height);
    try {  // the pixels it drew (file:// images need --allow-file-access-from-files for this)
      var c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      var g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      var d = g.getImageData(0, 0, c.width, c.height).data, ink = 0, counts = colours.map(function () { return 0; });
      for (var k = 0; k < d.length; k += 4) {
        if (d[k] < 245 || d[k + 1] < 245 || d[k + 2] < 245) ink++;
        for (var m = 0; m < colours.length; m++)
          if (d[k] === colours[m][0] && d[k + 1] === colours[m][1] && d[k + 2] === colours[m][2]) counts[m]++;
      }
      line += ' ink ' + ink + ' of ' + (d.length / 4) + ' colours ' + counts.join(',');
    } catch (e) {
      line += ' pixels-unreadable ' + String(e).replace(/\\s+/g, '_');
    }
    lines.push(line);
  }
  var pre = document.createElement('pre');
  pre.id = 'image-check';
  pre.textContent = lines.join('\\n') + '\\nPROBE-DONE';
  document.body.appendChild(pre);
});
</script>"""


def rgb(hex_colour):
    return [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]


def inject(index_html, check_html):
    page = open(index_html, encoding="utf-8").read()
    if page.count("</body>") != 1:
        sys.exit("FAIL: %s has %d </body> tags" % (index_html, page.count("</body>")))
    probe = PROBE % str([rgb(c) for c in MODEL_COLOURS])
    open(check_html, "w", encoding="utf-8").write(page.replace("</body>", probe + "</body>"))


def check_images(dom_file, report_dir):
    dom = open(dom_file, encoding="utf-8", errors="replace").read()
    if "PROBE-DONE" not in dom:
        sys.exit("FAIL: the page never finished loading (no probe output in the DOM)")
    pattern = re.compile(r"IMG (\S+) (\w+) natural (\d+)x(\d+) shown (\d+)x(\d+) "
                         r"(?:ink (\d+) of (\d+) colours ([\d,]+)|pixels-unreadable (\S+))")
    models = len(json.load(open(os.path.join(report_dir, "results.json"), encoding="utf-8"))["models"])
    seen, problems = {}, []
    for m in pattern.finditer(dom):
        src, state, nw, nh, sw, sh = m.group(1), m.group(2), *map(int, m.group(3, 4, 5, 6))
        seen[src] = True
        print(m.group(0))
        if state != "complete" or nw == 0 or nh == 0:
            problems.append("%s did not load as an image (%s, %dx%d)" % (src, state, nw, nh))
            continue
        if sw == 0 or sh == 0:
            problems.append("%s is not shown (%dx%d on the page)" % (src, sw, sh))
        if m.group(10):
            problems.append("%s: cannot read its pixels: %s" % (src, m.group(10)))
            continue
        ink, total = int(m.group(7)), int(m.group(8))
        colours = [int(c) for c in m.group(9).split(",")]
        if ink < 0.02 * total:
            problems.append("%s is nearly blank (%d of %d pixels inked)" % (src, ink, total))
        if src in CHARTS_WITH_MODEL_COLOURS:
            for colour, count in list(zip(MODEL_COLOURS, colours))[:models]:
                if count < 20:
                    problems.append("%s shows too little of model colour %s (%d pixels)" % (src, colour, count))
    charts = sorted(f for f in os.listdir(report_dir) if f.endswith(".svg"))
    for chart in charts:
        if chart not in seen:
            problems.append("%s is not on the page" % chart)
    if not charts:
        problems.append("no charts in " + report_dir)
    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    print("images ok: %d charts loaded, shown and drawn" % len(charts))


def png_rows(path):
    """The rows of an 8-bit RGB or RGBA PNG (no interlace), unfiltered, as bytearrays."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: %s is not a PNG" % path)
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    if depth != 8 or colour_type not in (2, 6) or interlace:
        sys.exit("FAIL: %s: unsupported PNG (depth %d, colour type %d)" % (path, depth, colour_type))
    bpp = 3 if colour_type == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:    # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            line = bytearray(bytes((a + b) & 255 for a, b in zip(line, prev)))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        yield width, bpp, line
        prev = line


def check_png(path):
    colours, pixels, background = {}, 0, 0
    for width, bpp, line in png_rows(path):
        for x in range(0, width * bpp, bpp * 2):  # every other pixel is plenty
            px = bytes(line[x:x + 3])
            colours[px] = colours.get(px, 0) + 1
            pixels += 1
    background = max(colours.values())
    inked = 1 - background / pixels
    print("screenshot: %d pixels sampled, %d colours, %.1f%% differ from the background" %
          (pixels, len(colours), 100 * inked))
    if len(colours) < 50 or inked < 0.05:
        sys.exit("FAIL: the screenshot %s is (nearly) blank" % path)


if __name__ == "__main__":
    commands = {"inject": inject, "images": check_images, "png": check_png}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
