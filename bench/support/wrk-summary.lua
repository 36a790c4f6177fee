-- wrk's end-of-run hook: one JSON line with what bench/support/wrk.ts reads.
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status
  io.write(string.format(
    'WRK_SUMMARY {"requests":%d,"durationUs":%d,"bytes":%d,"errors":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, summary.bytes, errors, latency:percentile(50), latency:percentile(99)))
end
