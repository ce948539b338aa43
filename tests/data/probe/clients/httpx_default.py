import sys, httpx
try:
    r = httpx.get(sys.argv[1])
except httpx.HTTPError:
    sys.exit(1)
sys.exit(0 if r.is_success else 1)
