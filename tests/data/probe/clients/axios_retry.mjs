// axios with axios-retry 4: retries 3, exponentialDelay (2^n · 100 ms + 0–20 %),
// the default retryCondition (network errors and 5xx on idempotent requests),
// and axios' timeout of 1000 ms, which axios-retry does not reset between
// attempts (shouldResetTimeout: false): one budget for the whole call.
import axios from 'axios';
import axiosRetry from 'axios-retry';
axiosRetry(axios, { retries: 3, retryDelay: axiosRetry.exponentialDelay });
try {
  const r = await axios.get(process.env.RETRYLINT_URL, { timeout: 1000 });
  process.exit(r.status === 200 ? 0 : 1);
} catch (e) {
  console.error(e.code || e.name);
  process.exit(2);
}
