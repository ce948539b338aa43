# urllib3 POST with Retry(total=3, backoff_factor=0.2): POST is not in
# allowed_methods, so only connection errors are retried.
import os, sys, urllib3
from urllib3.util import Retry
url = os.environ["RETRYLINT_URL"]
retry = Retry(total=3, backoff_factor=0.2, status_forcelist=[502, 503, 504])
try:
    r = urllib3.PoolManager(retries=retry).request("POST", url, body=b'{"order": 1}', timeout=0.5)
    sys.exit(0 if r.status == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
