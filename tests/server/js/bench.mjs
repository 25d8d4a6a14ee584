// Server benchmarks (run by tests/bench/bench_server.sh, not by `make test`). Prints
//   METRIC <name> <value> <unit> <description>
// lines. Two measurements, each against its own fresh daemon on loopback:
//
// capacity  default instances (3 strands x 12 points, verlet, 4 substeps, each moved by a
//           built-in shake so the codec works for real) are added 500-1000 at a time while
//           100 WebSocket subscribers, one room each, receive frames. At each step the
//           daemon's exact p99 tick work time over 256 ticks is read from /metrics;
//           capacity = the most instances with p99 under half the 60 Hz budget (8.33 ms).
//           Three audiences: each subscriber watches one instance (100 watched; the rest
//           are bots nobody watches, whose frames the server does not encode), each watches
//           a room of 10 (1,000 watched), and every instance watched.
// latency   200 clients each publish head poses at 60 Hz for their own instance and
//           watch it; latency = pose sent -> first frame whose last_seq covers it. Also
//           the server's own part (ponytail_pose_to_publish_seconds: admitted -> the
//           frame set that applied it published) and the fan-out. Each run also does the
//           same trial with the C load generator as the clients (`ponytail load`, one
//           process: 200 publishers and 200 subscribers of 200 one-instance rooms, a
//           sample per pose, and the delivery: tick deadline -> receipt), so the Node
//           client's own share of the figure shows.
// workers   the same 4,000 driven instances stepped (nobody watching, so no client
//           competes for the cores) and then encoded (all watched by one subscriber)
//           with --workers 1 and --workers 2, one daemon after the other in each run:
//           the ratios of the mean step, tick and encode times are the speed-up.
// frame     GET /v1/instances/{id}/frame with `wrk -c50` (Debian's wrk; .ci/deps bench)
//           against GET /v1/instances on the same daemon in the same run.
//
// Every figure is the median of PT_BENCH_RUNS runs (default 3), reported with its
// spread (min and max as _min/_max metrics). The machine may be shared: wall-clock
// figures mean something only when it is quiet; the ratios compare peers of one run.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { encodeMessage } from '../../../proto/js/ponytail-proto.mjs';
import { Client } from './client.mjs';
import { def, sleep } from './daemon.mjs';
import { RUNS, createMany, log, readMetrics, reported, start } from './bench_common.mjs';

const which = process.argv[2] ?? 'all';

const strands3 = [
  { anchor: [-0.05, 0.06, -0.09] }, { anchor: [0, 0.06, -0.1] }, { anchor: [0.05, 0.06, -0.09] },
]; /* 12 points x 0.03 m each: the defaults */

async function capacity(perRoom) {
  const d = await start(['--max-instances', '100000', '--write-rate', '0', '--max-conns-per-ip', '1000']);
  const SUBS = 100, budgetHalf = 1000 / 60 / 2;
  /* Subscribers count records from the batch header without decoding them: the load
   * generator shares the machine's two cores with the daemon and must stay light. */
  const subs = [];
  for (let k = 0; k < SUBS; k++) {
    const ws = new WebSocket(d.ws, 'ponytail.v1');
    ws.binaryType = 'arraybuffer';
    const c = { ws, records: 0 };
    await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
    ws.onmessage = (e) => {
      const b = new Uint8Array(e.data);
      if (b[4] === 0x82) c.records += b[26] | (b[27] << 8); /* frame_batch: u16 count at 26 */
    };
    ws.send(encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: `sub${k}` }));
    ws.send(encodeMessage({ type: 'subscribe', room: `r${k}`, ids: [] }));
    subs.push(c);
  }
  let n = 0, best = 0, bestRow = null;
  /* Ramps to 15,000 / 6,750 / 5,750 instances: past every level measured so far (9,000 /
   * 4,750 / 3,250 with --realtime 10), so the ramp's end is never the capacity. */
  const steps = perRoom === 1 ? [2000, 1000, 500, 500, 500, 500, 500, 500, 500, 500, 1000, 1000, 1000, 1000, 1000, 1000, 2000]
    : perRoom ? [500, 250, 250, 250, 250, 250, 250, 250, 500, 500, 500, 500, 500, 500, 500, 1000]
      : [250, 250, 250, 250, 250, 250, 250, 500, 500, 500, 500, 500, 500, 500, 500];
  for (const add of steps) {
    await createMany(d, add, (i) => ({
      name: `bot${n + i}`, room: perRoom && n + i >= SUBS * perRoom ? 'unwatched' : `r${(n + i) % SUBS}`,
      strands: strands3,
      driver: { motion: 'shake', amplitude: 30, period: 0.8 + ((n + i) % 17) * 0.05 },
    }));
    n += add;
    await sleep(1500); /* settle: creates done, subscribers caught up */
    /* This machine is shared: a step that fails is measured twice more before it counts,
     * so one burst of someone else's work does not end the ramp. */
    let row;
    for (let attempt = 0; attempt < 3; attempt++) {
      row = await measure(n);
      if (row.p99 < budgetHalf && row.delivered >= 0.95) break;
    }
    log(`capacity (${perRoom ? perRoom + ' per subscriber' : 'all watched'}): ${n} instances: tick work p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms ` +
      `(step ${row.step.toFixed(2)} ms, encode ${row.encode.toFixed(2)} ms), ${row.overruns} overruns, ` +
      `${row.hz.toFixed(1)} ticks/s, ${(row.delivered * 100).toFixed(1)}% of records delivered`);
    if (row.p99 >= budgetHalf || row.delivered < 0.95) break;
    best = n;
    bestRow = row;
  }
  async function measure(n) {
    const m0 = readMetrics((await d.req('GET', '/metrics')).text);
    const b0 = subs.reduce((a, c) => a + c.records, 0);
    await sleep(4500); /* > 256 ticks: the quantile window holds only this step */
    const m1 = readMetrics((await d.req('GET', '/metrics')).text);
    const b1 = subs.reduce((a, c) => a + c.records, 0);
    const ticks = m1.get('ponytail_ticks_total') - m0.get('ponytail_ticks_total');
    const row = {
      n,
      p50: m1.get('ponytail_tick_work_recent_seconds{quantile="0.5"}') * 1e3,
      p99: m1.get('ponytail_tick_work_recent_seconds{quantile="0.99"}') * 1e3,
      step: (m1.get('ponytail_tick_step_seconds_total') - m0.get('ponytail_tick_step_seconds_total')) / ticks * 1e3,
      encode: (m1.get('ponytail_tick_encode_seconds_total') - m0.get('ponytail_tick_encode_seconds_total')) / ticks * 1e3,
      overruns: m1.get('ponytail_tick_overruns_total') - m0.get('ponytail_tick_overruns_total'),
      delivered: (b1 - b0) / (ticks * Math.min(n, perRoom ? SUBS * perRoom : n)),
      hz: ticks / 4.5,
    };
    return row;
  }
  for (const c of subs) c.ws.close();
  await d.cleanup();
  return { best, row: bestRow };
}

async function capacityRuns(perRoom) {
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await capacity(perRoom));
  const tag = perRoom === 1 ? '' : perRoom ? `_${perRoom}_watched_per_subscriber` : '_all_watched';
  const who = perRoom ? `100 subscribers x ${perRoom} instances watched` : 'every instance watched by one of 100 subscribers';
  reported(`server.instances_at_60hz${tag}`, runs.map((x) => x.best), 0, 'instances',
    `default instances (3x12 points, verlet, 4 substeps, driven) at 60 Hz with p99 tick work < 8.33 ms; ${who}`);
  const ok = runs.filter((x) => x.row);
  reported(`server.tick_p99_ms${tag}`, ok.map((x) => x.row.p99), 3, 'ms', `p99 tick work at each run's capacity; ${who}`);
  reported(`server.step_ms${tag}`, ok.map((x) => x.row.step), 3, 'ms', `mean step time per tick at each run's capacity (2 workers)`);
  reported(`server.encode_ms${tag}`, ok.map((x) => x.row.encode), 3, 'ms', `mean frame-encode time per tick at each run's capacity; ${who}`);
  if (perRoom === 1)
    reported('server.step_ns_per_point_substep', ok.map((x) => x.row.step * 1e6 / (x.best * 36 * 4)), 2, 'ns',
      'wall step time per point per substep (2 workers)');
}

async function latency() {
  const d = await start(['--write-rate', '0', '--max-conns-per-ip', '1000']);
  const m0 = readMetrics((await d.req('GET', '/metrics')).text);
  const N = 200;
  const made = await createMany(d, N, (i) => def({ name: `pub${i}`, room: `lat${i}`, prewarm_s: 0.5 }));
  const clients = [];
  const samples = [];
  for (let i = 0; i < N; i++) {
    const c = await Client.open(d.ws, { name: `pub${i}` });
    const id = BigInt(made[i].id);
    c.send({ type: 'authorize', instance_id: id, token: made[i].token });
    c.send({ type: 'subscribe', room: '', ids: [id] });
    c.sent = new Map();
    c.seq = 0;
    c.id = id;
    c.waiters.push((m) => {
      if (m.type === 'frame_batch') {
        const s = m.records[0]?.last_seq ?? 0;
        for (const [seq, t] of c.sent) if (seq <= s) { if (c.measuring) samples.push(m.at - t); c.sent.delete(seq); }
      }
      c.msgs.length = 0;
      return false;
    });
    clients.push(c);
  }
  await sleep(500);
  /* Each client samples at its own 60 Hz, out of phase with the server's ticks and with
   * the other clients (a 1 ms timer sends for the clients whose slot comes up), so the
   * load generator itself does not add bursts. */
  const t0 = performance.now();
  const send = () => {
    const now = performance.now() - t0;
    for (let i = 0; i < clients.length; i++) {
      const c = clients[i];
      const due = (c.seq + 1) * (1000 / 60) + (i / clients.length) * (1000 / 60);
      if (now < due) continue;
      const seq = ++c.seq;
      c.sent.set(seq, performance.now());
      const a = (seq % 60) / 60 * 2 * Math.PI;
      c.send({ type: 'head_pose', instance_id: c.id, seq, client_time_us: 0n, flags: 0, p: [0, 1.5, 0], q: [0, Math.sin(a / 4), 0, Math.cos(a / 4)] });
    }
  };
  const timer = setInterval(send, 1);
  await sleep(1000);
  for (const c of clients) c.measuring = true;
  await sleep(10000);
  clearInterval(timer);
  await sleep(200);
  const m1 = readMetrics((await d.req('GET', '/metrics')).text);
  for (const c of clients) c.close();
  await d.cleanup();
  samples.sort((a, b) => a - b);
  const q = (p) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))];
  const dm = (k) => m1.get(k) - m0.get(k);
  const inServer = dm('ponytail_pose_to_publish_seconds_sum') / dm('ponytail_pose_to_publish_seconds_count') * 1e3;
  const fanout = dm('ponytail_ws_fanout_seconds_sum') / dm('ponytail_ws_fanout_seconds_count') * 1e3;
  const work = dm('ponytail_tick_duration_seconds_sum') / dm('ponytail_ticks_total') * 1e3;
  log(`latency: ${samples.length} poses, p50 ${q(0.5).toFixed(2)} ms, p99 ${q(0.99).toFixed(2)} ms, max ${samples[samples.length - 1].toFixed(2)} ms; ` +
    `in the server (admitted -> published) mean ${inServer.toFixed(2)} ms, tick work mean ${work.toFixed(2)} ms, fan-out (deadline -> last batch) mean ${fanout.toFixed(2)} ms`);
  return { p99: q(0.99), p50: q(0.5), inServer, fanout, work };
}

/* The latency trial with `ponytail load` as the clients (see the top). null when the
 * generator is not built or fails (said in the log). */
async function latencyC() {
  const bin = `${process.env.PT_BUILD ?? 'build'}/bin/ponytail`;
  const d = await start(['--write-rate', '0', '--max-conns-per-ip', '1000']);
  const out = `${d.data}/load.json`;
  const code = await new Promise((resolve) => {
    const p = spawn(bin, ['load', '--rooms', '200', '--per-room', '1', '--publishers', '200',
      '--subscribers', '200', '--duration', '10', '--ramp', '2', '--motion', 'shake',
      '--server', d.http, '--json', out], { stdio: 'ignore' });
    p.on('error', () => resolve(-1));
    p.on('exit', (c) => resolve(c));
  });
  let j = null;
  try { j = JSON.parse(readFileSync(out, 'utf8')); } catch { j = null; }
  await d.cleanup();
  if (code !== 0 || !j?.latency_ms?.samples) {
    log(`latency (ponytail load): no result (${bin} exited ${code})`);
    return null;
  }
  const l = j.latency_ms, dv = j.delivery_ms;
  log(`latency (ponytail load): ${l.samples} poses, p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, max ${l.max.toFixed(2)} ms; ` +
    `delivery (tick deadline -> receipt) p50 ${dv.p50.toFixed(2)} ms, p99 ${dv.p99.toFixed(2)} ms`);
  return { p99: l.p99, p50: l.p50, dp50: dv.p50, dp99: dv.p99 };
}

async function latencyRuns() {
  const runs = [], cruns = [];
  for (let r = 0; r < RUNS; r++) {
    runs.push(await latency());
    const c = await latencyC();
    if (c) cruns.push(c);
  }
  reported('server.latency_c_p99_ms', cruns.map((x) => x.p99), 2, 'ms', 'head pose published -> first frame reflecting it, every pose, loopback, ponytail load (C): 200 publishers, 200 subscribers');
  reported('server.latency_c_p50_ms', cruns.map((x) => x.p50), 2, 'ms', 'same, median');
  reported('server.delivery_c_p50_ms', cruns.map((x) => x.dp50), 2, 'ms', 'same trial: tick deadline -> frame received, median');
  reported('server.delivery_c_p99_ms', cruns.map((x) => x.dp99), 2, 'ms', 'same trial: tick deadline -> frame received, p99');
  reported('server.latency_p99_ms', runs.map((x) => x.p99), 2, 'ms', 'head pose sent -> first frame reflecting it, loopback, 200 publishing clients');
  reported('server.latency_p50_ms', runs.map((x) => x.p50), 2, 'ms', 'same, median');
  reported('server.latency_in_server_ms', runs.map((x) => x.inServer), 2, 'ms',
    'mean of the same poses from admission by the door to the publication of the frame set that applied them (ponytail_pose_to_publish_seconds)');
  reported('server.fanout_ms', runs.map((x) => x.fanout), 2, 'ms', 'mean tick deadline -> last of the 200 batches written (ponytail_ws_fanout_seconds)');
}

/* Mean ms per tick of n driven instances over 3 s: step and tick work with nobody
 * watching (no client competes for the cores), then encode with one room subscriber
 * watching all of them. */
async function stepEncode(workers, n) {
  const d = await start(['--max-instances', '100000', '--write-rate', '0', '--workers', String(workers)]);
  await createMany(d, n, (i) => ({ name: `w${i}`, room: 'w', strands: strands3, driver: { motion: 'shake', amplitude: 30, period: 0.8 + (i % 17) * 0.05 } }));
  await sleep(1000);
  const q0 = readMetrics((await d.req('GET', '/metrics')).text);
  await sleep(3000);
  const q1 = readMetrics((await d.req('GET', '/metrics')).text);
  const qticks = q1.get('ponytail_ticks_total') - q0.get('ponytail_ticks_total');
  const quiet = (k) => (q1.get(k) - q0.get(k)) / qticks * 1e3;
  const ws = new WebSocket(d.ws, 'ponytail.v1');
  ws.binaryType = 'arraybuffer';
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  ws.onmessage = () => {};
  ws.send(encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'w' }));
  ws.send(encodeMessage({ type: 'subscribe', room: 'w', ids: [] }));
  await sleep(1500);
  const m0 = readMetrics((await d.req('GET', '/metrics')).text);
  await sleep(3000);
  const m1 = readMetrics((await d.req('GET', '/metrics')).text);
  ws.close();
  await d.cleanup();
  const ticks = m1.get('ponytail_ticks_total') - m0.get('ponytail_ticks_total');
  const per = (k) => (m1.get(k) - m0.get(k)) / ticks * 1e3;
  return { step: quiet('ponytail_tick_step_seconds_total'), work: quiet('ponytail_tick_duration_seconds_sum'), encode: per('ponytail_tick_encode_seconds_total') };
}

async function workersRuns() {
  const N = 4000, rows = [];
  for (let r = 0; r < RUNS; r++) {
    const one = await stepEncode(1, N), two = await stepEncode(2, N);
    log(`workers: ${N} instances (step, work: unwatched; encode: all watched): 1 worker step ${one.step.toFixed(2)} ms encode ${one.encode.toFixed(2)} ms work ${one.work.toFixed(2)} ms; ` +
      `2 workers step ${two.step.toFixed(2)} ms encode ${two.encode.toFixed(2)} ms work ${two.work.toFixed(2)} ms`);
    rows.push({ step: one.step / two.step, encode: one.encode / two.encode, work: one.work / two.work });
  }
  reported('server.workers2_step_speedup', rows.map((x) => x.step), 2, 'x', `step time per tick, --workers 1 / --workers 2, ${N} driven instances (same run)`);
  reported('server.workers2_encode_speedup', rows.map((x) => x.encode), 2, 'x', `encode + publish time per tick, --workers 1 / --workers 2, ${N} instances all watched`);
  reported('server.workers2_tick_speedup', rows.map((x) => x.work), 2, 'x', `whole tick work, --workers 1 / --workers 2, ${N} driven instances nobody watches`);
}

/* wrk's requests/s and mean latency (ms) for one URL. */
function wrk(url) {
  const r = spawnSync('wrk', ['-c50', '-t2', '-d4s', url], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  const lat = /Latency\s+([\d.]+)(us|ms|s)/.exec(r.stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout);
  if (!rps || !lat || non2xx) return null;
  const scale = { us: 1e-3, ms: 1, s: 1e3 }[lat[2]];
  return { rps: Number(rps[1]), ms: Number(lat[1]) * scale };
}

async function frameRoute() {
  if (spawnSync('wrk', ['--version']).error) {
    log('frame: wrk is not installed (.ci/deps bench installs it): skipped');
    return;
  }
  const d = await start(['--write-rate', '0', '--max-conns-per-ip', '1000']);
  const [inst] = await createMany(d, 1, () => def({ name: 'framed', room: 'f', driver: { motion: 'shake', amplitude: 30, period: 0.8 } }), 1);
  const frame = `${d.http}/v1/instances/${inst.id}/frame`, list = `${d.http}/v1/instances`;
  await d.req('GET', `/v1/instances/${inst.id}/frame`);
  const fr = [], li = [];
  for (let r = 0; r < RUNS; r++) {
    const a = wrk(frame), b = wrk(list);
    if (a) fr.push(a);
    if (b) li.push(b);
    log(`frame: ${a ? `${a.rps.toFixed(0)} req/s at ${a.ms.toFixed(2)} ms mean` : 'failed'} for the frame route, ` +
      `${b ? `${b.rps.toFixed(0)} req/s at ${b.ms.toFixed(2)} ms` : 'failed'} for the list`);
  }
  await d.cleanup();
  reported('server.frame_route_rps', fr.map((x) => x.rps), 0, 'req/s', 'GET /v1/instances/{id}/frame, wrk -c50 -t2, one driven instance');
  reported('server.frame_route_mean_ms', fr.map((x) => x.ms), 3, 'ms', 'same, mean latency');
  reported('server.list_route_rps', li.map((x) => x.rps), 0, 'req/s', 'GET /v1/instances (the one instance), wrk -c50 -t2, the same daemon and run');
  if (fr.length && fr.length === li.length)
    reported('server.frame_route_vs_list_ratio', fr.map((x, i) => x.rps / li[i].rps), 2, 'x', 'frame route req/s over list route req/s, run by run');
}

if (which === 'capacity' || which === 'capacity1' || which === 'all') await capacityRuns(1);
if (which === 'capacity' || which === 'capacity10' || which === 'all') await capacityRuns(10);
if (which === 'capacity' || which === 'capacity0' || which === 'all') await capacityRuns(0);
if (which === 'latency' || which === 'all') await latencyRuns();
if (which === 'workers' || which === 'all') await workersRuns();
if (which === 'frame' || which === 'all') await frameRoute();
process.exit(0);
