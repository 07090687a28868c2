"""The inspector's status page in a real browser (Debian's chromium, headless, driven by selenium).

Usage: status_page.py URL TOKEN SCHEDULE_FILE
Opens the page, gives the token, waits for the current item's name and the screenshot, compares
the screenshot's pixels (drawn by the browser) with /api/screenshot.png fetched by the page's own
token, then breaks the schedule file (the player logs the rejection and plays on) and waits for the
log tail to grow. Prints one JSON object with what it saw.
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

url, token, schedule = sys.argv[1], sys.argv[2], sys.argv[3]
options = Options()
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1024"):
    options.add_argument(argument)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_script_timeout(60)
result = {}
try:
    driver.get(url)
    wait = WebDriverWait(driver, 90)
    field = wait.until(lambda d: d.find_element(By.ID, "token"))
    field.send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#login button").click()
    media = wait.until(lambda d: d.find_element(By.ID, "status-media").text or None)
    result["media"] = media
    result["stored_token"] = driver.execute_script("return sessionStorage.getItem('vitrine-token')") == token
    wait.until(lambda d: d.execute_script("const i = document.getElementById('shot'); return i.complete && i.naturalWidth > 0"))
    # The picture the page shows against the API's, both decoded and compared by the browser.
    result["pixels"] = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const img = document.getElementById('shot');
        function pixels(source, width, height) {
            const canvas = document.createElement('canvas'); canvas.width = width; canvas.height = height;
            const context = canvas.getContext('2d'); context.drawImage(source, 0, 0);
            return context.getImageData(0, 0, width, height).data;
        }
        fetch('/api/screenshot.png', {headers: {'Authorization': 'Bearer ' + sessionStorage.getItem('vitrine-token')}})
            .then(r => r.blob()).then(b => createImageBitmap(b)).then(bitmap => {
                const a = pixels(img, img.naturalWidth, img.naturalHeight), b = pixels(bitmap, bitmap.width, bitmap.height);
                let different = 0;
                if (a.length === b.length) for (let i = 0; i < a.length; i++) if (Math.abs(a[i] - b[i]) > 2) different++;
                done({width: img.naturalWidth, height: img.naturalHeight, apiWidth: bitmap.width, apiHeight: bitmap.height,
                      different: a.length === b.length ? different : -1, total: a.length});
            }).catch(e => done({error: String(e)}));
    """)
    before = driver.execute_script("return document.getElementById('log').childNodes.length")
    result["log_before"] = before
    # Something to log while playing: a broken schedule, rejected (the show goes on).
    with open(schedule, "a") as f:
        f.write("\nthis is = not [toml\n")
    deadline = time.monotonic() + 90
    after = before
    while time.monotonic() < deadline and after <= before:
        time.sleep(0.2)
        after = driver.execute_script("return document.getElementById('log').childNodes.length")
    result["log_after"] = after
    result["log_text"] = driver.find_element(By.ID, "log").text[-2000:]
finally:
    driver.quit()
print(json.dumps(result))
