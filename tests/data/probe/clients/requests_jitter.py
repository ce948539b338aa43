# requests with an HTTPAdapter: Retry(total=4, backoff_factor=0.2,
# backoff_jitter=0.1, status_forcelist=[502, 503, 504]), 0.5 s timeout.
import os, sys, requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry
url = os.environ["RETRYLINT_URL"]
s = requests.Session()
s.mount("http://", HTTPAdapter(max_retries=Retry(total=4, backoff_factor=0.2, backoff_jitter=0.1, status_forcelist=[502, 503, 504])))
try:
    r = s.get(url, timeout=0.5)
    sys.exit(0 if r.status_code == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
