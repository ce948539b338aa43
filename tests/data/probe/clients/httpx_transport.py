# httpx: HTTPTransport(retries=3) retries connection failures only; 0.5 s timeout.
import os, sys, httpx
url = os.environ["RETRYLINT_URL"]
try:
    with httpx.Client(transport=httpx.HTTPTransport(retries=3), timeout=0.5) as c:
        r = c.get(url)
    sys.exit(0 if r.status_code == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
