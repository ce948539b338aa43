# requests with its defaults (HTTPAdapter max_retries=0) and a 0.5 s timeout.
import os, sys, requests
url = os.environ["RETRYLINT_URL"]
try:
    r = requests.get(url, timeout=0.5)
    sys.exit(0 if r.status_code == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
