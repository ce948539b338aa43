import sys, requests
from tenacity import retry, stop_after_attempt, wait_exponential, retry_if_exception_type
@retry(stop=stop_after_attempt(6), wait=wait_exponential(multiplier=0.1, max=0.5),
       retry=retry_if_exception_type(requests.RequestException), reraise=True)
def get(url):
    r = requests.get(url, timeout=0.5)
    r.raise_for_status()
try:
    get(sys.argv[1])
except requests.RequestException:
    sys.exit(1)
