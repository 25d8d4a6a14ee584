// Helpers shared by the daemon benchmarks (bench.mjs, bench_avatars.mjs): the daemon
// with the bench's flags, /metrics parsing, bulk creation, and METRIC lines with their
// spread over runs.
import { startDaemon } from './daemon.mjs';

/* Extra daemon flags, e.g. PT_SERVER_ARGS="--workers 1". Every daemon here runs with
 * --realtime PT_BENCH_REALTIME (default 10: SCHED_FIFO for the tick thread and workers,
 * the recommended production setting, server/README.md; 0 = normal scheduling); where the
 * kernel refuses it (no CAP_SYS_NICE) the daemon warns and runs normally, and the log
 * line below says which it was. */
const realtime = process.env.PT_BENCH_REALTIME ?? '10';
let schedLogged = false;
/* startDaemon with the bench's flags; says once how the tick thread is scheduled. */
export async function start(args) {
  const d = await startDaemon({ args: [...args, ...extra] });
  if (!schedLogged) {
    schedLogged = true;
    log(`daemon scheduling: ${/SCHED_FIFO/.test(d.log) ? `SCHED_FIFO (--realtime ${realtime})` : /refused/.test(d.log) ? `normal (--realtime ${realtime} refused)` : 'normal'}`);
  }
  return d;
}
const extra = ['--realtime', realtime, ...(process.env.PT_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean)];
export const RUNS = Math.max(1, Number(process.env.PT_BENCH_RUNS ?? 3));
export const log = (...a) => console.log(...a);
export const metricLine = (name, value, unit, desc) => log(`METRIC ${name} ${value} ${unit} ${desc}`);
export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
/* name = median of the runs' values, name_min / name_max their spread */
export function reported(name, values, digits, unit, desc) {
  const v = values.filter((x) => Number.isFinite(x));
  if (!v.length) return;
  const f = (x) => x.toFixed(digits);
  metricLine(name, f(median(v)), unit, `${desc} (median of ${v.length} runs: ${v.map(f).join(', ')})`);
  metricLine(`${name}_min`, f(Math.min(...v)), unit, `${name}: lowest of ${v.length} runs`);
  metricLine(`${name}_max`, f(Math.max(...v)), unit, `${name}: highest of ${v.length} runs`);
}

export function readMetrics(text) {
  const m = new Map();
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const i = line.lastIndexOf(' ');
    m.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return m;
}

export async function createMany(d, n, make, concurrency = 32) {
  let next = 0;
  const out = [];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      const r = await d.req('POST', '/v1/instances', make(i));
      if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text}`);
      out[i] = r.json;
    }
  }));
  return out;
}
