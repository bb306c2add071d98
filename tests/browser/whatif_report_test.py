#!/usr/bin/env python3
"""kai whatif's HTML report in a real browser: headless Chromium renders the page (no network),
its screenshot is not blank, and the DOM the browser built holds every chart with its title and
labelled axes.

    python3 tests/browser/whatif_report_test.py   (KAI_BIN: the kai binary; default build/kai)
Skips when Chromium is not installed (scripts/setup.sh installs Debian's chromium).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

REPO = pathlib.Path(__file__).resolve().parents[2]
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EX = REPO / "examples" / "whatif"


def png_pixels(path: pathlib.Path) -> tuple[int, int, bytes]:
    """(width, height, the decompressed scanlines with their filter bytes) of a PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


@unittest.skipIf(CHROMIUM is None, "chromium not installed (apt-get install chromium)")
class WhatIfReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kai-whatif-report-")
        cls.dir = pathlib.Path(cls.tmp.name)
        subprocess.run([str(KAI_BIN), "whatif", "-f", str(EX / "cluster.yaml"), "--workload",
                        str(EX / "generator.yaml"), "--seed", "7", "--until", "2d",
                        "--variant", f"more-gpus={EX / 'more-gpus.yaml'}",
                        "--report", str(cls.dir / "report")],
                       check=True, capture_output=True, timeout=300)
        cls.page = (cls.dir / "report" / "index.html").as_uri()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def chromium(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                               "--hide-scrollbars", f"--user-data-dir={self.dir / 'profile'}",
                               *args, self.page], capture_output=True, text=True, timeout=120)

    def test_the_screenshot_shows_charts_not_a_blank_page(self):
        shot = self.dir / "shot.png"
        self.chromium("--window-size=1000,1400", f"--screenshot={shot}")
        width, height, pixels = png_pixels(shot)
        self.assertEqual((width, height), (1000, 1400))
        # A blank page is one colour; charts, lines and text make a good part of it something else.
        background = max(set(pixels[1:4096]), key=pixels[1:4096].count)
        other = sum(1 for b in pixels if b != background) / len(pixels)
        self.assertGreater(other, 0.02, f"only {other:.3%} of the bytes differ from the background")

    def test_every_chart_has_a_title_and_labelled_axes(self):
        dom = self.chromium("--dump-dom").stdout
        self.assertIn("<svg", dom)
        self.assertIn("Cluster GPU utilisation", dom)
        self.assertIn("simulated time (hours)", dom)
        self.assertIn("GPUs allocated (%)", dom)
        self.assertIn("allocation (solid) and fair share (dashed)", dom)
        self.assertGreaterEqual(dom.count("<svg"), 3, "utilisation, allocations, waits")
        self.assertNotIn("http://", dom.replace("http://www.w3.org/2000/svg", ""),
                         "the page must not need the network")


if __name__ == "__main__":
    unittest.main(verbosity=2)
