"""What the explorer's tests need beyond the suite: Model Explorer (the
`explorer` extra, in the test extra) and, for the browser tests, Debian's
Chromium and ChromeDriver. Where one is missing the tests that need it skip
and say why; `.ci/run` sets HLO2PENGUIN_REQUIRE_BROWSER=1, and there a
missing one fails them instead."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def _missing(why: str) -> None:
    if os.environ.get("HLO2PENGUIN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{why} (HLO2PENGUIN_REQUIRE_BROWSER=1: CI must have it)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def model_explorer():
    from printer.penguin.explorer.serve import available

    why = available()
    if why is not None:
        _missing(why)


@pytest.fixture(scope="session")
def chromium(model_explorer):
    """A headless Chromium driven by Selenium (software WebGL: Model Explorer draws with it)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
            _missing(f"{path} not found: apt-get install chromium chromium-driver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed: pip install -e '.[test]'")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--use-gl=swiftshader", "--enable-unsafe-swiftshader",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-dev-shm-usage", "--window-size=1600,900"):
        options.add_argument(flag)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()
