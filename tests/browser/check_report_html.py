#!/usr/bin/env python3
"""Opens a `jobgen report --html` file in a real headless Chromium (Debian's chromium and
chromium-driver, driven by python3-selenium) and checks that it renders: the page loads, every
chart named on the command line is drawn (a non-empty box) with exactly the expected number of
marks (`svg#ID .mark`), and the browser console holds no error (a blocked external resource or a
Content-Security-Policy violation would be one).

Usage: check_report_html.py FILE CHART_ID=MARKS [CHART_ID=MARKS ...]
Exit: 0 passed, 1 failed, 77 skipped (no chromium, chromedriver or selenium; never when CI=true).
"""
import os
import shutil
import sys
import tempfile


def skip(why):
    if os.environ.get("CI") == "true":
        print(f"FAIL: {why} (CI=true: the browser test may not be skipped; run make deps)")
        sys.exit(1)
    print(f"SKIP: {why} (make deps installs chromium chromium-driver python3-selenium)")
    sys.exit(77)


def driver_for(profile_dir):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip("python3-selenium is not installed")
    browser = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if browser is None or not os.path.exists(chromedriver):
        skip("chromium or chromedriver is not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # Root needs --no-sandbox; the rest keep a machine without network from reaching out.
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(chromedriver), options=options)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    path = os.path.abspath(sys.argv[1])
    expected = {}
    for arg in sys.argv[2:]:
        chart, _, marks = arg.partition("=")
        expected[chart] = int(marks)
    if not os.path.isfile(path):
        print(f"FAIL: no such file {path}")
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="jobgen-chromium-") as profile_dir:
        driver = driver_for(profile_dir)
        try:
            driver.get("file://" + path)
            state = driver.execute_script("return document.readyState")
            if state != "complete":
                failures.append(f"the page did not finish loading ({state})")
            if driver.title != "jobgen report":
                failures.append(f"title is {driver.title!r}, not 'jobgen report'")
            for chart, marks in expected.items():
                found = driver.execute_script(
                    "const svg = document.querySelector('svg#' + arguments[0]);"
                    "if (!svg) return null;"
                    "const box = svg.getBoundingClientRect();"
                    "return [svg.querySelectorAll('.mark').length, box.width, box.height];",
                    chart)
                if found is None:
                    failures.append(f"no chart svg#{chart}")
                    continue
                count, width, height = found
                if count != marks:
                    failures.append(f"svg#{chart} has {count} marks, expected {marks}")
                if width <= 0 or height <= 0:
                    failures.append(f"svg#{chart} is not drawn ({width}x{height})")
            errors = [entry for entry in driver.get_log("browser")
                      if entry.get("level") in ("SEVERE", "ERROR")]
            for entry in errors:
                failures.append("console: " + entry.get("message", ""))
        finally:
            driver.quit()
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print(f"OK: {path} renders in headless Chromium; marks {expected}; no console errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
