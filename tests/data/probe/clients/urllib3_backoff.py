# urllib3 Retry with backoff_factor 0.5 and a status forcelist, 0.5 s timeout.
import os, sys, urllib3
from urllib3.util import Retry
url = os.environ["RETRYLINT_URL"]
retry = Retry(total=3, backoff_factor=0.5, status_forcelist=[429, 500, 502, 503, 504])
try:
    r = urllib3.PoolManager(retries=retry).request("GET", url, timeout=0.5)
    sys.exit(0 if r.status == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
