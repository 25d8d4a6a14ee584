// docker/ without a Docker engine (none runs on the test machines): the Dockerfile, the
// compose file, Prometheus's targets and the Kubernetes manifests are read and checked
// against each other, against docker/nginx.conf (which scale.test.mjs runs for real) and
// against what the binaries need; the Dockerfile's install step is run as it is written.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const YAML = createRequire(new URL('../server/package.json', import.meta.url))('yaml'); // pinned there
const read = (p) => readFileSync(p, 'utf8');
const BUILD = process.env.PT_BUILD || 'build';

// Dockerfile stages: [{from, name, lines: [instruction text, continuation lines joined]}].
function stages(text) {
  const out = [];
  const joined = text.replace(/\\\n/g, ' ').split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  for (const l of joined) {
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(l);
    if (m) out.push({ from: m[1], name: m[2], lines: [] });
    else out.at(-1).lines.push(l.trim());
  }
  return out;
}
const aptPackages = (stage) => stage.lines.filter((l) => l.startsWith('RUN'))
  .flatMap((l) => [...l.matchAll(/apt-get install -y --no-install-recommends ([^&]+)/g)])
  .flatMap((m) => m[1].trim().split(/\s+/));

test('Dockerfile: multi-stage on Debian 12, runtime libraries only, non-root, volume, health check', () => {
  const [build, run, ...rest] = stages(read('docker/Dockerfile'));
  assert.equal(rest.length, 0);
  assert.equal(build.from, 'debian:bookworm');
  assert.equal(run.from, 'debian:bookworm-slim');
  /* The build stage has every build package .ci/deps names (but cmocka: tests only). */
  const ci = /^need_build="([^"]+)"/m.exec(read('.ci/deps'))[1].split(/\s+/).filter((p) => p !== 'libcmocka-dev');
  const buildPkgs = aptPackages(build);
  assert.deepEqual(ci.filter((p) => !buildPkgs.includes(p)), [], 'build stage lacks packages of .ci/deps build');
  const runPkgs = aptPackages(run);
  assert.deepEqual(runPkgs.filter((p) => /-dev$|^gcc|^make$/.test(p)), [], 'no build tools at run time');
  /* The runtime stage installs exactly the packages of the libraries the binaries link
   * (what ldd finds, named by dpkg -S), plus curl for the health check. */
  /* The libraries the binaries name (DT_NEEDED), found where ldd resolves them, owned by
   * which packages (one dpkg -S; merged /usr: a /lib path may be owned as /usr/lib). */
  const libs = new Set();
  for (const bin of ['ponytaild', 'ponytail']) {
    const path = join(BUILD, 'bin', bin);
    const needed = [...execFileSync('objdump', ['-p', path], { encoding: 'utf8' }).matchAll(/^\s+NEEDED\s+(\S+)$/gm)].map((m) => m[1]);
    const where = Object.fromEntries([...execFileSync('ldd', [path], { encoding: 'utf8' }).matchAll(/^\s+(\S+) => (\/\S+)/gm)].map((m) => [m[1], m[2]]));
    for (const n of needed) libs.add(where[n]);
  }
  const paths = [...libs].flatMap((l) => [l, l.startsWith('/usr/') ? l.slice(4) : `/usr${l}`]);
  const owners = spawnSync('dpkg', ['-S', ...paths], { encoding: 'utf8' }).stdout;
  const need = new Set([...owners.matchAll(/^([^:\s]+)(?::\S+)?: /gm)].map((m) => m[1]));
  /* libc6 is in the base image; sanitizer builds add their runtimes. */
  const direct = [...need].filter((p) => p !== 'libc6' && !/^lib(asan|ubsan)/.test(p)).sort();
  assert.ok(direct.length >= 5, `libraries found: ${[...need]}`);
  const listed = runPkgs.filter((p) => p !== 'curl').sort();
  assert.deepEqual(listed.filter((p) => !direct.includes(p)), [], 'the runtime stage installs only what the binaries link');
  /* A library linked but not listed must come with a listed one (a build without
   * --as-needed, like SANITIZE=1's, names libcap2, which libwebsockets17 depends on). */
  const deps = execFileSync('apt-cache', ['depends', '--important', ...listed], { encoding: 'utf8' });
  const pulled = new Set([...deps.matchAll(/Depends: (\S+)/g)].map((m) => m[1]));
  assert.deepEqual(direct.filter((p) => !listed.includes(p) && !pulled.has(p)), [], 'the runtime stage lacks libraries the binaries link');
  const text = run.lines.join('\n');
  assert.match(text, /^USER (?!root|0\b)\S+/m);
  assert.match(text, /^VOLUME \/var\/lib\/ponytail$/m);
  assert.match(text, /^HEALTHCHECK .*curl -fsS http:\/\/127\.0\.0\.1:8080\/healthz/m);
  assert.match(text, /PONYTAIL_DATA=\/var\/lib\/ponytail/);
});

test('Dockerfile: its install step, run as written, gives every file the runtime stage copies', () => {
  const [build, run] = stages(read('docker/Dockerfile'));
  const step = build.lines.find((l) => l.includes('DESTDIR='));
  const install = /(make WERROR=1 install PREFIX=\/usr DESTDIR=)\/out/.exec(step);
  assert.ok(install, step);
  const out = mkdtempSync(join(tmpdir(), 'pt-docker-'));
  try {
    const san = BUILD === 'build/san' ? ['SANITIZE=1'] : [];
    execFileSync('make', ['--no-print-directory', 'WERROR=1', 'install', 'PREFIX=/usr', `DESTDIR=${out}`, ...san], { stdio: 'pipe' });
    const copies = run.lines.filter((l) => l.startsWith('COPY --from=build'));
    assert.ok(copies.length >= 3);
    for (const c of copies) {
      const src = c.split(/\s+/)[2];
      assert.ok(existsSync(join(out, src.replace(/^\/out/, ''))), `${c}: ${src} not made by the install step`);
    }
    const entry = /^ENTRYPOINT \["([^"]+)"\]/m.exec(run.lines.join('\n'))[1];
    assert.ok(copies.some((c) => c.endsWith(` ${entry}`)), `ENTRYPOINT ${entry} is copied in`);
    const web = run.lines.join(' ');
    assert.ok(existsSync(join(out, /PONYTAIL_WEB_ROOT=(\S+)/.exec(web)[1], 'index.html')));
    assert.ok(existsSync(join(out, /PONYTAIL_PROTO_JS=(\S+)/.exec(web)[1], 'ponytail-proto.mjs')));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('compose: three nodes with their own ids and volumes, an edge each, the front, Prometheus on all three', () => {
  const c = YAML.parse(read('docker/compose.yaml'), { merge: true });
  const ring = [...read('docker/nginx.conf').matchAll(/^\s+server (node\d+):80 max_fails=0;$/gm)].map((m) => m[1]);
  const nodes = Object.keys(c.services).filter((s) => /^node\d+$/.test(s));
  assert.deepEqual(nodes, ['node1', 'node2', 'node3']);
  assert.deepEqual([...new Set(ring)].sort(), nodes, 'nginx.conf names the compose nodes');
  /* Node k's ids (k * 10^12 + n) route to the upstream of compose service nodek. */
  const conf = read('docker/nginx.conf');
  for (const n of nodes) {
    const k = n.slice(4);
    assert.ok(conf.includes(`"~^/v1/instances/${k}[0-9]{12}(/|$)"  ponytail_node${k};`), `${n}: path map line`);
    assert.ok(conf.includes(`"~^${k}[0-9]{12}$"`), `${n}: ?instance= map line`);
    assert.ok(conf.includes(`upstream ponytail_node${k} { server ${n}:80 max_fails=0;`), `${n}: its upstream`);
  }
  const vols = new Set();
  for (const n of nodes) {
    const s = c.services[n];
    assert.equal(s.environment.PONYTAIL_NODE_ID, n.slice(4), `${n}'s node id`);
    assert.equal(s.environment.PONYTAIL_WS_PUBLIC_URL, '/ws');
    assert.equal(s.build.dockerfile, 'docker/Dockerfile');
    const v = s.volumes[0].split(':');
    assert.equal(v[1], '/var/lib/ponytail');
    vols.add(v[0]);
    assert.equal(c.services[`edge${n.slice(4)}`].network_mode, `service:${n}`);
  }
  assert.equal(vols.size, 3, 'a data volume per node');
  assert.ok(c.services.front.volumes.includes('./nginx.conf:/etc/nginx/nginx.conf:ro'));
  /* TLS at the front (docker/tls.conf; tests/client/tls.test.sh runs it): the directory
   * mounted is the one nginx.conf includes, and the TLS port is published. */
  assert.ok(c.services.front.volumes.includes('./tls:/etc/nginx/ponytail-tls:ro'));
  assert.match(conf, /^\s+include \/etc\/nginx\/ponytail-tls\/\*\.conf;$/m);
  assert.match(read('docker/tls.conf'), /^listen 443 ssl;$/m);
  assert.ok(c.services.front.ports.includes('8443:443'));
  assert.match(read('.gitignore'), /^\/docker\/tls\/$/m, 'docker/tls/ (keys) is never committed');
  assert.ok(c.services.prometheus.volumes.includes('./prometheus.yml:/etc/prometheus/prometheus.yml:ro'));
  const prom = YAML.parse(read('docker/prometheus.yml'));
  const targets = prom.scrape_configs.flatMap((j) => j.static_configs.flatMap((s) => s.targets));
  assert.deepEqual(targets.sort(), nodes.map((n) => `${n}:8080`));
  for (const f of ['edge.conf', 'nginx.conf', 'prometheus.yml', 'Dockerfile']) assert.ok(existsSync(join('docker', f)));
});

test('k8s: StatefulSet with stable names and volumes, headless service, the same nginx configs, readiness on /readyz', () => {
  const k = YAML.parse(read('docker/k8s/kustomization.yaml'));
  const docs = k.resources.flatMap((r) => YAML.parseAllDocuments(read(join('docker/k8s', r))).map((d) => d.toJS()));
  const get = (kind, name) => docs.find((d) => d.kind === kind && (!name || d.metadata.name === name));
  const sts = get('StatefulSet');
  const svc = get('Service', sts.spec.serviceName);
  assert.equal(svc.spec.clusterIP, 'None', 'headless');
  assert.deepEqual(svc.spec.selector, sts.spec.selector.matchLabels);
  assert.ok(sts.spec.volumeClaimTemplates.some((v) => v.metadata.name === 'data'));
  const [daemon, edge] = sts.spec.template.spec.containers;
  assert.equal(daemon.readinessProbe.httpGet.path, '/readyz');
  assert.equal(daemon.livenessProbe.httpGet.path, '/healthz');
  assert.ok(daemon.volumeMounts.some((m) => m.name === 'data' && m.mountPath === '/var/lib/ponytail'));
  assert.match(daemon.command.join(' '), /PONYTAIL_NODE_ID=\$\$\(\( \$\{HOSTNAME##\*-\} \+ 1 \)\)/);
  assert.equal(sts.spec.template.spec.securityContext.runAsNonRoot, true);
  assert.equal(edge.image.split(':')[0], 'nginx');
  /* The configs are docker/'s: the edge's the same file, the front's with the pod names. */
  const files = Object.fromEntries(k.configMapGenerator.map((g) => [g.name, g.files[0].split('=')[1]]));
  assert.equal(read(join('docker/k8s', files['ponytail-edge'])), read('docker/edge.conf'));
  const front = read('docker/nginx.conf').replace(/node(\d+):80/g, (_, n) => `ponytail-${n - 1}.${svc.metadata.name}:80`);
  assert.equal(read(join('docker/k8s', files['ponytail-front'])), front, 'k8s/front.conf is docker/nginx.conf with pod names');
  const ring = [...front.matchAll(/^\s+server (ponytail-\d+)\.ponytail:80 max_fails=0;$/gm)].map((m) => m[1]);
  assert.equal(new Set(ring).size, sts.spec.replicas, 'the ring has every replica');
  const dep = get('Deployment', 'ponytail-front');
  assert.equal(dep.spec.template.spec.volumes[0].configMap.name, 'ponytail-front');
});
