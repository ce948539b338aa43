// Node's built-in fetch (undici): no retries.
try {
  const r = await fetch(process.env.RETRYLINT_URL, { signal: AbortSignal.timeout(500) });
  process.exit(r.status === 200 ? 0 : 1);
} catch (e) {
  console.error(e.name);
  process.exit(2);
}
