# urllib3's default retry (Retry.DEFAULT = Retry(3)) with a 0.5 s timeout.
import os, sys, urllib3
url = os.environ["RETRYLINT_URL"]
try:
    r = urllib3.PoolManager().request("GET", url, timeout=0.5)
    sys.exit(0 if r.status == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
