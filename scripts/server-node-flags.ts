/**
 * The Node flags the service runs under: `npm start` (package.json) and the image (Dockerfile)
 * pass exactly these, and every test, bench and soak that spawns the built server passes them too,
 * so what is measured is what is deployed (test/common/server-node-flags.test.ts holds the three
 * together).
 *
 * `--max-semi-space-size=32` (MB; V8's default grows to 16): when one event reaches 100 webhooks,
 * the process allocates about 25 MB within ~50 ms, so with the default young generation two
 * scavenges of 5-9 ms each (the burst's in-flight state survives them) fell into most events, one
 * of them often before the last request was written. With 32 MB it is one. Light load, same-run
 * pairs on one machine, default against 32: CPU per delivery 829 / 751, 853 / 841, 847 / 812,
 * 839 / 764 µs; p99 51 / 40, 55 / 41, 42 / 32, 37 / 40 ms (docs/performance.md, session 17).
 * The cost is up to 32 MB more resident memory for the larger young generation.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32']
