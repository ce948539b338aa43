# tenacity: stop_after_attempt(6), wait_exponential(multiplier=0.125, max=1),
# retrying every exception; urllib.request with a 0.5 s timeout.
import os, sys, urllib.request
from tenacity import retry, stop_after_attempt, wait_exponential
url = os.environ["RETRYLINT_URL"]

@retry(stop=stop_after_attempt(6), wait=wait_exponential(multiplier=0.125, max=1), reraise=True)
def get():
    with urllib.request.urlopen(url, timeout=0.5) as r:
        return r.status

try:
    sys.exit(0 if get() == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
