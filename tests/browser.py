"""A real headless browser for the tests of the HTML reports: Debian's chromium driven by
Selenium through Debian's chromedriver (`make deps-test` installs both; nothing is downloaded).

``Page`` is what a test looks at after loading a file: the browser console's errors, the Plotly
figures on the page and whether each has drawn its SVG, the visible text, and a JavaScript probe.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# as root, without a sandbox; no background traffic (this machine's network is closed)
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
         "--window-size=1280,2000")
RENDER_TIMEOUT = 30.0


@dataclass(frozen=True)
class Page:
    errors: list[str]  # SEVERE entries of the browser console
    figures: int  # Plotly figures on the page
    drawn: int  # of those, the ones with their SVG drawn
    text: str  # the visible text of the body
    probe: object  # the value of the probe expression after loading


def start():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        assert shutil.which(path), f"{path} not found: Debian's chromium and chromium-driver (make deps-test)"
    opts = webdriver.ChromeOptions()
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.binary_location = CHROMIUM
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def load(driver, path: Path, probe: str = "null") -> Page:
    """Open ``path``, wait until every Plotly figure has drawn (bounded), and describe the page."""
    driver.get_log("browser")  # what an earlier page left in the console
    driver.get(path.resolve().as_uri())
    count = "return document.querySelectorAll('.js-plotly-plot').length"
    deadline = time.monotonic() + RENDER_TIMEOUT
    while True:
        figures = int(driver.execute_script(count))
        done = int(driver.execute_script(
            "return Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".filter(f => f.querySelector('.main-svg')).length"))
        if done == figures or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    text = driver.execute_script("return document.body.innerText")
    return Page(errors, figures, done, text, driver.execute_script(f"return {probe}"))
