// A CPU profile of the process it is imported into, written to cpu-<pid>.cpuprofile in the working
// directory when the process ends (open it in Chrome DevTools). For the service a benchmark starts:
//   BENCH_SERVER_NODE_OPTIONS="--import $PWD/bench/support/cpu-profile-hook.mjs" npm run bench:webhooks
// (--cpu-prof itself is not allowed in NODE_OPTIONS.)
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'

const session = new Session()
session.connect()
session.post('Profiler.enable', () => session.post('Profiler.start'))
let written = false
function write() {
  if (written) return
  written = true
  session.post('Profiler.stop', (error, result) => {
    if (!error) writeFileSync(`cpu-${process.pid}.cpuprofile`, JSON.stringify(result.profile))
  })
}
for (const signal of ['SIGTERM', 'SIGINT'])
  process.once(signal, () => {
    write()
    // Alone, this listener kept the signal from ending the process: end it as the signal would.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  })
process.on('beforeExit', write)
