// got 14 POST with its defaults: POST is not in retry.methods, so nothing is retried.
import got from 'got';
try {
  const r = await got.post(process.env.RETRYLINT_URL, { json: { order: 1 } });
  process.exit(r.statusCode === 200 ? 0 : 1);
} catch (e) {
  console.error(e.code || e.name);
  process.exit(2);
}
