// got 14 with its defaults: retry.limit 2, 1000·2^(n-1) ms + U(0, 100 ms) noise,
// no request timeout.
import got from 'got';
try {
  const r = await got(process.env.RETRYLINT_URL);
  process.exit(r.statusCode === 200 ? 0 : 1);
} catch (e) {
  console.error(e.code || e.name);
  process.exit(2);
}
