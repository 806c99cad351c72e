"""`aqmlab report`: an HTML page and a Markdown file of the reproduced experiments,
checked in headless Chromium (Debian's chromium and chromium-driver, installed by
`make setup`)."""

from __future__ import annotations

import base64
import contextlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aqmlab import experiments
from aqmlab.report import collect

AQMLAB = [sys.executable, "-m", "aqmlab"]


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("reproduce")
    store = tmp_path_factory.mktemp("store")
    experiments.reproduce("appenzeller.fig5_1", "quick", out=root, store=store, workers=2)
    experiments.reproduce("appenzeller.fig3_4", "quick", out=root, store=store, workers=2)
    return root


@pytest.fixture(scope="module")
def page(reproduced, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    p = subprocess.run([*AQMLAB, "report", "--results", str(reproduced), "--out", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out / "report.html"


def test_report_is_self_contained_with_every_experiment(page, reproduced):
    text = page.read_text()
    entries = collect(reproduced)
    assert [e.meta["id"] for e in entries] == ["appenzeller.fig3_4", "appenzeller.fig5_1"]
    for e in entries:
        assert f'id="{e.anchor}"' in text
        # every comparison row is in the page, with its verdict
        assert text.count(">yes<") + text.count(">NO<") >= len(e.comparisons)
        for c in e.comparisons:
            assert c["quantity"] in text
    # figures are inlined, nothing is fetched from elsewhere
    assert text.count('src="data:image/png;base64,') == 2
    assert "http://" not in text and "https://" not in text and "<script" not in text


def test_inlined_figures_are_the_experiments_pngs(page, reproduced):
    text = page.read_text()
    for e in collect(reproduced):
        png = base64.b64encode(e.figure.read_bytes()).decode()
        assert png in text


def test_markdown_refers_to_copied_figures(page):
    md = (page.parent / "report.md").read_text()
    for name in ("quick-appenzeller-fig5_1.png", "quick-appenzeller-fig3_4.png"):
        assert f"(figures/{name})" in md
        assert (page.parent / "figures" / name).stat().st_size > 10_000
    assert "| quantity | paper | ours | deviation |" in md


def test_report_of_nothing_is_a_user_error(tmp_path):
    p = subprocess.run([*AQMLAB, "report", "--results", str(tmp_path), "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert p.returncode == 2
    assert "--results" in p.stderr and "aqmlab reproduce" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([*AQMLAB, "report", "--results", str(tmp_path / "missing")], capture_output=True, text=True)
    assert p.returncode == 2 and "no such directory" in p.stderr


@contextlib.contextmanager
def browser():
    """Headless Chromium through its WebDriver, keeping the console log."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_path, "chromium and chromedriver are installed by `make setup` (Debian packages)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-extensions", "--no-first-run"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def test_report_renders_in_headless_chromium(page):
    """The page loads in a real browser with every figure decoded and no console error."""
    with browser() as driver:
        driver.get(page.as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        assert driver.title == "aqmlab: reproduced experiments"
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);"
        )
        assert len(images) == 2
        for complete, width, height in images:
            assert complete and width > 300 and height > 200
        headings = driver.execute_script("return Array.from(document.querySelectorAll('h2')).map(h => h.textContent);")
        assert any("appenzeller.fig5_1" in h for h in headings) and any("appenzeller.fig3_4" in h for h in headings)
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors


def test_a_broken_page_would_be_caught(tmp_path):
    """The browser check can fail: a page with a missing image logs a console error."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>x</title></head><body><img src="missing.png"></body></html>')
    with browser() as driver:
        driver.get(bad.as_uri())
        width = driver.execute_script("return document.images[0].naturalWidth")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert width == 0
    assert errors, "a missing image should log a console error"


def test_a_series_kept_in_one_cell_is_shown_as_its_length():
    import polars as pl

    from aqmlab.report import _data_table

    header, rows = _data_table(pl.DataFrame({"policy": ["red"], "queue": [[1.0, 2.0, 3.0]]}))
    assert header == ["policy", "queue"]
    assert rows == [["red", "3 values in table.parquet"]]
