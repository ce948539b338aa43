# aiohttp-retry: ExponentialRetry(attempts=4, start_timeout=0.1, factor=2,
# statuses={429}), retry_all_server_errors (the default); 0.5 s total timeout per attempt.
import asyncio, os, sys
import aiohttp
from aiohttp_retry import RetryClient, ExponentialRetry
url = os.environ["RETRYLINT_URL"]

async def main():
    opts = ExponentialRetry(attempts=4, start_timeout=0.1, factor=2.0, statuses={429})
    async with RetryClient(retry_options=opts, timeout=aiohttp.ClientTimeout(total=0.5)) as c:
        async with c.get(url) as r:
            return r.status

try:
    sys.exit(0 if asyncio.run(main()) == 200 else 1)
except Exception as e:
    print(type(e).__name__, file=sys.stderr)
    sys.exit(2)
