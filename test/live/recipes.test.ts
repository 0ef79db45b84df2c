/**
 * docs/recipes, each checked by its own tool as far as this machine allows:
 * the systemd units and drop-ins by `systemd-analyze verify` (next to
 * Debian's own haproxy.service and nginx.service, which the drop-ins amend),
 * the server settings by `haproxy -c` and `nginx -t` (nginx in a namespace of
 * its own that has the hold's address, because `reuseport` makes `-t` bind),
 * the --check values of the drop-ins split by synplug's own parser into the
 * argv that then runs and passes, the Kubernetes manifests by a YAML parser,
 * the container scripts by `sh -n`. Kubernetes itself and docker are not run.
 * HAProxy's `-sf` unit is run for real as far as it goes without systemd and
 * without a hold: its start and its reload command, in namespaces of the
 * test's own, with clients on the local address and from another namespace
 * over a veth pair (what a Service's traffic is to a pod); the pod's ports
 * are traced from the Service to HAProxy's `bind` and the holds' options.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { splitCommandWords } from '../../src/guard/precheck.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RECIPES = join(ROOT, 'docs/recipes');
const BUNDLE = join(ROOT, 'dist/bundle/synplug.cjs');
const IP = '/usr/sbin/ip';
const HAPROXY = '/usr/sbin/haproxy';
const NGINX = '/usr/sbin/nginx';
const NS = `sp-recipes-${process.pid}`;
/** How {@link unitWords} marks a unit's `${NAME}` (systemd replaces it by the Environment= value, quoted or not). */
const unitVar = (name: string): string => `@${name}@`;
/** Where systemd looks for a command given without a path (systemd.service(5), "Command lines"). */
const SYSTEMD_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function needFile(file: string): string {
  if (!existsSync(file)) throw new Error(`${file} is missing: run scripts/install-test-deps.sh`);
  return file;
}

function need(file: string): string {
  if (!executable(file)) throw new Error(`${file} is missing: run scripts/install-test-deps.sh`);
  return file;
}

/**
 * The systemd recipes in a unit folder of their own, next to Debian's
 * haproxy.service and nginx.service. Where no `synplug` is on systemd's
 * search path (a checkout that was not `npm link`ed), the bare `synplug` of
 * the Exec lines becomes the checkout's own executable.
 */
function unitDir(edit: (name: string, text: string) => string = (_n, t) => t): string {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-units-'));
  const linked = SYSTEMD_PATH.some((d) => executable(join(d, 'synplug')));
  const adapt = (name: string, text: string) => edit(name, linked ? text : text.replace(/^(Exec[A-Za-z]*=-?)synplug /gm, `$1${BUNDLE} `));
  for (const unit of ['haproxy.service', 'nginx.service']) copyFileSync(needFile(`/lib/systemd/system/${unit}`), join(dir, unit));
  const src = join(RECIPES, 'systemd');
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    if (entry.isFile()) writeFileSync(join(dir, entry.name), adapt(entry.name, readFileSync(join(src, entry.name), 'utf8')));
    else if (entry.isDirectory()) {
      mkdirSync(join(dir, entry.name));
      for (const f of readdirSync(join(src, entry.name)))
        writeFileSync(join(dir, entry.name, f), adapt(`${entry.name}/${f}`, readFileSync(join(src, entry.name, f), 'utf8')));
    }
  }
  return dir;
}

function verify(dir: string): { code: number | null; out: string } {
  const units = readdirSync(dir)
    .filter((f) => f.endsWith('.service'))
    .map((f) => join(dir, f));
  const r = spawnSync('systemd-analyze', ['verify', ...units], {
    encoding: 'utf8',
    cwd: dir,
    env: { ...process.env, SYSTEMD_UNIT_PATH: `${dir}:`, SYSTEMD_LOG_LEVEL: 'notice' },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

test.before(() => {
  execFileSync(IP, ['netns', 'add', NS]);
  execFileSync(IP, ['-n', NS, 'link', 'set', 'lo', 'up']);
  execFileSync(IP, ['-n', NS, 'addr', 'add', '169.254.255.254/32', 'dev', 'lo']);
});
test.after.always(() => {
  spawnSync(IP, ['netns', 'del', NS]);
});

test('systemd-analyze verify accepts every unit and drop-in of docs/recipes/systemd, with haproxy.service and nginx.service', (t) => {
  const dir = unitDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = verify(dir);
  t.is(r.code, 0, r.out);
  // Warnings about our own files would not fail verify: none is allowed either.
  const ours = r.out.split('\n').filter((l) => /synplug|myapp|haproxy-sf/.test(l));
  t.deepEqual(ours, [], r.out);
});

// The edit applies to either form of the line: `synplug` (on systemd's search path) or the checkout's bundle.
test('the drop-ins are read: a drop-in naming a command that does not exist fails verify', (t) => {
  for (const unit of ['haproxy', 'nginx']) {
    const dir = unitDir((name, text) =>
      name === `${unit}.service.d/synplug.conf` ? text.replace(/^ExecReload=\S*synplug(?:\.cjs)? /m, 'ExecReload=/nonexistent/synplug ') : text,
    );
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const r = verify(dir);
    t.not(r.code, 0, `${unit}: ${r.out}`);
    t.regex(r.out, /\/nonexistent\/synplug/, unit);
  }
});

/** The words of a drop-in's ExecReload= that runs synplug (systemd's quoting is the shell's for these lines). */
function synplugReload(file: string): string[] {
  const lines = readFileSync(join(RECIPES, 'systemd', file), 'utf8').split('\n');
  const line = lines.find((l) => /^ExecReload=\S*synplug /.test(l));
  if (!line) throw new Error(`${file}: no ExecReload= running synplug`);
  const prev = lines[lines.indexOf(line) - 1];
  if (prev !== 'ExecReload=') throw new Error(`${file}: the distribution's ExecReload= lines must be reset first`);
  // $MAINPID is systemd's to expand (a word of its own): kept as a marker for the comparison.
  return splitCommandWords(line.slice('ExecReload='.length).replace(/\$MAINPID\b/g, '@MAINPID@'), 'ExecReload');
}

test("haproxy drop-in: its --check, with the unit's environment, is the distribution's own check and passes on the recipe's haproxy.cfg", (t) => {
  const words = synplugReload('haproxy.service.d/synplug.conf');
  t.deepEqual(words.slice(0, 2), ['synplug', 'protect']);
  t.deepEqual(words.slice(words.indexOf('--') + 1), ['/bin/kill', '-USR2', '@MAINPID@'], "the distribution's reload: USR2 to the master");
  t.is(words[words.indexOf('--wait-listen') + 1], '169.254.255.254:80');
  const check = words[words.indexOf('--check') + 1];
  // systemd replaces ${VAR} inside a word by its value; the unit sets CONFIG and EXTRAOPTS.
  const unit = readFileSync('/lib/systemd/system/haproxy.service', 'utf8');
  t.regex(unit, /ExecReload=\/usr\/sbin\/haproxy -Ws -f \$CONFIG -c -q \$EXTRAOPTS/, "the check is the one Debian's unit runs on reload (there with -q)");
  const argv = splitCommandWords(check.replace(/\$\{CONFIG\}/, join(RECIPES, 'servers/haproxy.cfg')).replace(/\$\{EXTRAOPTS\}/, ''));
  t.deepEqual(argv, [HAPROXY, '-Ws', '-f', join(RECIPES, 'servers/haproxy.cfg'), '-c']);
  const r = spawnSync(need(argv[0]), argv.slice(1), { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  // Without -q, a refused configuration says why (HAProxy 2.6 with -q prints nothing): the output protect shows.
  const bad = join(mkdtempSync(join(tmpdir(), 'synplug-recipes-')), 'bad.cfg');
  writeFileSync(bad, readFileSync(join(RECIPES, 'servers/haproxy.cfg'), 'utf8') + '\nfrontend broken\n    no-such-keyword-here 1\n');
  const refused = spawnSync(need(argv[0]), [...argv.slice(1, 3), bad, ...argv.slice(4)], { encoding: 'utf8' });
  t.not(refused.status, 0);
  t.regex(refused.stdout + refused.stderr, /ALERT.*no-such-keyword-here/s);
});

/** The units that reload or restart through synplug, and the set-up unit each one wants. */
const PROTECTED_UNITS: Array<[file: string, setupUnit: string]> = [
  ['haproxy.service.d/synplug.conf', 'synplug-setup.service'],
  ['nginx.service.d/synplug.conf', 'synplug-setup.service'],
  ['myapp.service', 'synplug-setup.service'],
  ['myapp-restart.service', 'synplug-setup.service'],
  ['haproxy-sf.service', 'synplug-setup-inbound.service'],
];

test('units: ExecStopPost= releases only an orphaned plug (a protected restart runs it between stop and start); Wants=, not Requires=, their set-up unit, which starts before them', (t) => {
  const units = readdirSync(join(RECIPES, 'systemd')).filter((f) => f.endsWith('.service'));
  for (const [file, setupUnit] of PROTECTED_UNITS) {
    const text = readFileSync(join(RECIPES, 'systemd', file), 'utf8');
    const post = [...text.matchAll(/^ExecStopPost=(.*)$/gm)].map((m) => m[1]);
    t.deepEqual(post, ['synplug release --orphaned'], file);
    t.notRegex(text, /^Requires=/m, file);
    t.true(units.includes(setupUnit), setupUnit);
    t.regex(text, new RegExp(`^Wants=${setupUnit.replace('.', '\\.')}$`, 'm'), file);
    t.regex(text, new RegExp(`^After=${setupUnit.replace('.', '\\.')}$`, 'm'), file);
  }
  // Each set-up unit runs before the servers of the recipes (Before= of the unit each server's file amends or is).
  for (const setupUnit of new Set(PROTECTED_UNITS.map(([, u]) => u))) {
    const before = (/^Before=(.*)$/m.exec(readFileSync(join(RECIPES, 'systemd', setupUnit), 'utf8'))?.[1] ?? '').split(/\s+/);
    for (const [file, u] of PROTECTED_UNITS)
      if (u === setupUnit && !file.startsWith('myapp')) t.true(before.includes(file.replace(/\.d\/.*$/, '')), `${setupUnit} Before= ${file}`);
  }
});

/**
 * The value of a unit's `Key=` line (the last one), split as systemd splits
 * a command line; `${NAME}` and `$MAINPID`, which systemd replaces, become
 * `@NAME@` and `@MAINPID@`.
 */
function unitWords(file: string, key: string): string[] {
  const lines = readFileSync(join(RECIPES, 'systemd', file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`));
  if (!lines.length) throw new Error(`${file}: no ${key}=`);
  return splitCommandWords(
    lines[lines.length - 1]
      .slice(key.length + 1)
      .replace(/\$MAINPID\b/g, '@MAINPID@')
      .replace(/\$\{(\w+)\}/g, '@$1@'),
    key,
  );
}

/** The unit's Environment= assignments ("A=x" "B=y"). */
function unitEnv(file: string): Record<string, string> {
  const line = /^Environment=(.*)$/m.exec(readFileSync(join(RECIPES, 'systemd', file), 'utf8'))?.[1] ?? '';
  return Object.fromEntries(splitCommandWords(line, 'Environment').map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
}

test('inbound set-up unit: sets up and tears down the same device; its port is the one haproxy-sf.service waits for', (t) => {
  const start = unitWords('synplug-setup-inbound.service', 'ExecStart');
  t.deepEqual(start.slice(0, 3), ['synplug', 'setup', '--inbound']);
  const dev = start[3];
  t.deepEqual(unitWords('synplug-setup-inbound.service', 'ExecStop'), ['synplug', 'teardown', '--inbound', dev]);
  const ports = start.flatMap((w, i) => (w === '--port' ? [start[i + 1]] : []));
  t.deepEqual(ports, ['80']);
  const reload = unitWords('haproxy-sf.service', 'ExecReload');
  t.true(ports.includes(reload[reload.indexOf('--wait-listen') + 1]), 'haproxy-sf waits for a port the hold holds');
});

test("haproxy-sf.service: forking with its PID file; the reload is the start's command plus -sf $MAINPID, under protect with the unit's own check, which passes on the recipe's haproxy.cfg", (t) => {
  const text = readFileSync(join(RECIPES, 'systemd/haproxy-sf.service'), 'utf8');
  const env = unitEnv('haproxy-sf.service');
  t.regex(text, /^Type=forking$/m);
  t.is(/^PIDFile=(.*)$/m.exec(text)?.[1], env.PIDFILE);
  const start = unitWords('haproxy-sf.service', 'ExecStart');
  t.deepEqual(start, [HAPROXY, '-D', '-f', unitVar('CONFIG'), '-p', unitVar('PIDFILE')]);
  const reload = unitWords('haproxy-sf.service', 'ExecReload');
  t.deepEqual(reload.slice(0, 2), ['synplug', 'protect']);
  t.deepEqual(reload.slice(reload.indexOf('--') + 1), [...start, '-sf', '@MAINPID@'], 'the new process: the same command, told to replace the main one');
  t.deepEqual(splitCommandWords(reload[reload.indexOf('--check') + 1]), [HAPROXY, '-f', unitVar('CONFIG'), '-c']);
  t.deepEqual(unitWords('haproxy-sf.service', 'ExecStartPre'), [HAPROXY, '-f', unitVar('CONFIG'), '-c'], 'the same check before a start');
  const r = spawnSync(need(HAPROXY), ['-f', join(RECIPES, 'servers/haproxy.cfg'), '-c'], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
});

/** Run a command in a network namespace of the test's own; its output. */
function inNs(ns: string, argv: string[], timeout = 30_000): string {
  return execFileSync(IP, ['netns', 'exec', ns, ...argv], { encoding: 'utf8', timeout });
}

/** One HTTP GET from inside `ns` (python3's urllib): the body, or the error's text. */
function get(ns: string, url: string): string {
  const r = spawnSync(
    IP,
    [
      'netns',
      'exec',
      ns,
      'python3',
      '-c',
      'import sys, urllib.request\ntry: print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())\nexcept Exception as e: print("error:", e)',
      url,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return r.stdout.trim();
}

/** Whether a process exists (signal 0). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll `cond` every 100 ms, up to `tries` times; whether it came true. */
async function eventually(cond: () => boolean, tries = 300): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

test.serial(
  'haproxy-sf.service with synplug-setup-inbound.service, run for real (the hold this kernel supports): the hold set up on the device, HAProxy started, reloaded under protect, clients on the local address and from another namespace served before and after, the new process in the PID file, the old one gone',
  async (t) => {
    const env = { CONFIG: join(RECIPES, 'servers/haproxy.cfg'), PIDFILE: join(mkdtempSync(join(tmpdir(), 'synplug-recipes-')), 'haproxy.pid') };
    const expand = (words: string[], mainPid?: number) =>
      words.map((w) => w.replace(/@(\w+)@/g, (_m, k: string) => (k === 'MAINPID' ? String(mainPid) : env[k as keyof typeof env])));
    // The clients' namespace, joined to the server's by a veth pair: the way a Service's traffic reaches a pod's eth0.
    const client = `${NS}-c`;
    execFileSync(IP, ['netns', 'add', client]);
    const pids: number[] = [];
    t.teardown(() => {
      for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
      spawnSync(IP, ['netns', 'del', client]);
    });
    execFileSync(IP, ['-n', NS, 'link', 'add', 'sprsrv', 'type', 'veth', 'peer', 'name', 'sprcli', 'netns', client]);
    execFileSync(IP, ['-n', NS, 'addr', 'add', '169.254.77.1/30', 'dev', 'sprsrv']);
    execFileSync(IP, ['-n', client, 'addr', 'add', '169.254.77.2/30', 'dev', 'sprcli']);
    execFileSync(IP, ['-n', NS, 'link', 'set', 'sprsrv', 'up']);
    execFileSync(IP, ['-n', client, 'link', 'set', 'sprcli', 'up']);
    execFileSync(IP, ['-n', client, 'link', 'set', 'lo', 'up']);

    // synplug-setup-inbound.service's start, for the veth end the clients' SYNs arrive on (the unit's eth0).
    const stateDir = mkdtempSync(join(tmpdir(), 'synplug-recipes-state-'));
    const synplug = (words: string[]) => {
      const argv = words.map((w) => (w === 'eth0' ? 'sprsrv' : w));
      if (argv[0] !== 'synplug') throw new Error(`not a synplug command: ${argv.join(' ')}`);
      return spawnSync(IP, ['netns', 'exec', NS, process.execPath, BUNDLE, ...argv.slice(1)], {
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, SYNPLUG_STATE_DIR: stateDir },
      });
    };
    t.teardown(() => {
      synplug(['synplug', 'teardown']);
      rmSync(stateDir, { recursive: true, force: true });
    });
    const setup = synplug(unitWords('synplug-setup-inbound.service', 'ExecStart'));
    t.is(setup.status, 0, setup.stdout + setup.stderr);
    t.regex(setup.stdout + setup.stderr, /sprsrv/);

    inNs(NS, expand(unitWords('haproxy-sf.service', 'ExecStart')));
    const first = Number(readFileSync(env.PIDFILE, 'utf8').trim());
    pids.push(first);
    t.true(alive(first), 'haproxy -D left its process, whose PID the file names');
    t.is(get(NS, 'http://169.254.255.254/'), 'pong', 'a local client (the local hold address)');
    t.is(get(client, 'http://169.254.77.1/'), 'pong', 'a client from another namespace (the inbound hold)');

    // The unit's ExecReload=, whole: the check, the hold, the -sf reload, the release once the new socket listens.
    const reload = synplug(expand(unitWords('haproxy-sf.service', 'ExecReload'), first));
    t.is(reload.status, 0, reload.stdout + reload.stderr);
    t.regex(reload.stderr, /Configuration file is valid/, 'the check ran');
    t.regex(reload.stderr, /held new connections for .*; command exit 0; --wait-listen: a new socket listened on 0\.0\.0\.0:80/, reload.stderr);
    const second = Number(readFileSync(env.PIDFILE, 'utf8').trim());
    pids.push(second);
    t.not(second, first, 'the PID file names the new process (systemd reads it after the reload)');
    t.true(alive(second));
    t.true(await eventually(() => !alive(first)), 'the old process finished (-sf)');
    t.is(get(NS, 'http://169.254.255.254/'), 'pong');
    t.is(get(client, 'http://169.254.77.1/'), 'pong');
  },
);

test("nginx drop-in: its --check is nginx -t with the unit's -g, and the reload the unit's own", (t) => {
  const words = synplugReload('nginx.service.d/synplug.conf');
  t.deepEqual(words.slice(0, 2), ['synplug', 'protect']);
  t.deepEqual(words.slice(words.indexOf('--') + 1), [NGINX, '-g', 'daemon on; master_process on;', '-s', 'reload']);
  t.deepEqual(splitCommandWords(words[words.indexOf('--check') + 1]), [NGINX, '-t', '-q', '-g', 'daemon on; master_process on;']);
  const unit = readFileSync('/lib/systemd/system/nginx.service', 'utf8');
  t.true(unit.includes("ExecReload=/usr/sbin/nginx -g 'daemon on; master_process on;' -s reload"), "Debian's reload, kept as the protected command");
});

test('haproxy -c accepts docs/recipes/servers/haproxy.cfg', (t) => {
  const r = spawnSync(need(HAPROXY), ['-c', '-f', join(RECIPES, 'servers/haproxy.cfg')], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stdout, /Configuration file is valid/);
});

test('nginx -t accepts docs/recipes/servers/nginx.conf (in a namespace that has 169.254.255.254: reuseport makes -t bind)', (t) => {
  const r = spawnSync(IP, ['netns', 'exec', NS, need(NGINX), '-t', '-c', join(RECIPES, 'servers/nginx.conf')], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stderr, /test is successful/);
});

test('Kubernetes manifests parse as YAML, with NET_ADMIN (and the agent: hostPID, SYS_ADMIN for setns, SYS_PTRACE for /proc/PID/ns/net and fd)', (t) => {
  const load = (f: string) =>
    JSON.parse(
      execFileSync(
        'python3',
        ['-c', 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))', join(RECIPES, 'kubernetes', f)],
        {
          encoding: 'utf8',
        },
      ),
    );
  const [pod] = load('pod.yaml');
  t.is(pod.kind, 'Pod');
  t.deepEqual(pod.spec.containers[0].securityContext.capabilities.add, ['NET_ADMIN']);
  const [ds] = load('host-agent-daemonset.yaml');
  t.is(ds.kind, 'DaemonSet');
  t.true(ds.spec.template.spec.hostPID);
  t.deepEqual(ds.spec.template.spec.containers[0].securityContext.capabilities.add, ['NET_ADMIN', 'SYS_ADMIN', 'SYS_PTRACE']);
  t.regex(readFileSync(join(RECIPES, 'kubernetes/host-agent-daemonset.yaml'), 'utf8'), /synplug protect --netns \/proc\/PID\/ns\/net/);
});

test("pod.yaml's emptyDir state directory: created 0777 (refused, exit 6), made 0700 by entrypoint.sh before setup (accepted)", (t) => {
  const [pod] = JSON.parse(
    execFileSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))', join(RECIPES, 'kubernetes/pod.yaml')],
      {
        encoding: 'utf8',
      },
    ),
  );
  const mount = pod.spec.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'synplug-state').mountPath;
  t.truthy(pod.spec.volumes.find((v: { name: string; emptyDir?: object }) => v.name === 'synplug-state' && v.emptyDir));
  const lines = readFileSync(join(RECIPES, 'kubernetes/entrypoint.sh'), 'utf8').split('\n');
  const chmod = lines.findIndex((l) => l.startsWith('chmod '));
  t.true(chmod >= 0 && chmod < lines.findIndex((l) => l.startsWith('synplug setup')), 'the chmod comes before synplug setup');
  t.deepEqual(lines[chmod].split(' '), ['chmod', '0700', mount]);
  // What that does to a directory made as Kubernetes makes an emptyDir (0777):
  const dir = join(mkdtempSync(join(tmpdir(), 'synplug-recipes-')), 'state');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const status = () => spawnSync(process.execPath, [BUNDLE, 'status', '--json', '--state-dir', dir], { encoding: 'utf8', timeout: 60_000 });
  const refused = status();
  t.is(refused.status, 6, refused.stderr);
  t.regex(refused.stderr, /0777/);
  execFileSync('sh', ['-c', lines[chmod].replace(mount, dir)]);
  const ok = status();
  t.is(ok.status, 0, ok.stderr);
});

test('container scripts: sh -n accepts them; the reload script checks with haproxy -c before protect holds anything', (t) => {
  for (const f of ['entrypoint.sh', 'reload.sh']) {
    const r = spawnSync('sh', ['-n', join(RECIPES, 'kubernetes', f)], { encoding: 'utf8' });
    t.is(r.status, 0, `${f}: ${r.stderr}`);
  }
  const text = readFileSync(join(RECIPES, 'kubernetes/reload.sh'), 'utf8');
  const check = /--check '([^']*)'/.exec(text);
  t.truthy(check);
  t.deepEqual(splitCommandWords(check![1]), ['haproxy', '-c', '-f', '/usr/local/etc/haproxy/haproxy.cfg']);
});

/** The documents of a Kubernetes manifest (python3-yaml's safe_load_all, as JSON). */
// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below
function manifest(file: string): any[] {
  return JSON.parse(
    execFileSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))', join(RECIPES, 'kubernetes', file)],
      {
        encoding: 'utf8',
      },
    ),
  );
}

/** The fields Kubernetes requires of an object (apiVersion, kind, a DNS-label metadata.name). */
function assertObject(
  t: ExecutionContext,
  doc: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: string } },
  apiVersion: string,
  kind: string,
): void {
  t.is(doc.apiVersion, apiVersion, kind);
  t.is(doc.kind, kind);
  t.regex(doc.metadata?.name ?? '', /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, `${kind}.metadata.name`);
}

test('pod.yaml: its Service targets the port HAProxy binds on every address, which the inbound hold holds and the reload waits for; the local hold for a sidecar too', (t) => {
  const docs = manifest('pod.yaml');
  t.deepEqual(
    docs.map((d) => d.kind),
    ['Pod', 'Service'],
  );
  const [pod, svc] = docs;
  assertObject(t, pod, 'v1', 'Pod');
  assertObject(t, svc, 'v1', 'Service');
  const [container] = pod.spec.containers;
  t.regex(container.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  t.is(typeof container.image, 'string');
  for (const p of container.ports) {
    t.true(Number.isInteger(p.containerPort) && p.containerPort >= 1 && p.containerPort <= 65535, JSON.stringify(p));
    t.true(p.name === undefined || /^[a-z0-9-]{1,15}$/.test(p.name), JSON.stringify(p));
  }
  // The Service selects the pod, and its targetPort (a name or a number) is one of the pod's ports.
  for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>)) t.is(pod.metadata.labels[k], v, `selector ${k}`);
  t.is(svc.spec.ports.length, 1);
  const [sp] = svc.spec.ports;
  t.true(Number.isInteger(sp.port));
  t.true(['TCP', undefined].includes(sp.protocol));
  const target = container.ports.find((p: { name?: string; containerPort: number }) => p.name === sp.targetPort || p.containerPort === sp.targetPort);
  t.truthy(target, `targetPort ${sp.targetPort} is a port of the pod`);
  const port = String(target.containerPort);
  // The image's HAProxy configuration (what the Dockerfile copies) binds that port on every address.
  const dockerfile = readFileSync(join(RECIPES, 'kubernetes/Dockerfile'), 'utf8');
  const copy = /^COPY (docs\/recipes\/\S+) \/usr\/local\/etc\/haproxy\/haproxy\.cfg$/m.exec(dockerfile);
  t.truthy(copy, 'the Dockerfile copies a HAProxy configuration');
  const cfg = readFileSync(join(ROOT, copy![1]), 'utf8');
  const binds = [...cfg.matchAll(/^\s*bind\s+(\S+)/gm)].map((m) => m[1]);
  t.true(binds.includes(`:${port}`) || binds.includes(`*:${port}`), `bind lines: ${binds.join(', ')}`);
  // entrypoint.sh: the inbound hold of eth0 for that port, and the local hold; reload.sh waits for the port.
  const entry = readFileSync(join(RECIPES, 'kubernetes/entrypoint.sh'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('synplug setup'))
    .map((l) => splitCommandWords(l));
  t.deepEqual(entry, [
    ['synplug', 'setup', '--addr', '169.254.255.254'],
    ['synplug', 'setup', '--inbound', 'eth0', '--port', port],
  ]);
  const reload = readFileSync(join(RECIPES, 'kubernetes/reload.sh'), 'utf8');
  t.is(/^\s+--wait-listen (\S+) \\$/m.exec(reload)?.[1], port);
  t.regex(reload, /--check 'haproxy -c -f \/usr\/local\/etc\/haproxy\/haproxy\.cfg'/);
});

/**
 * synplug-setup-inbound.service's stop removes the hold its start set up, and
 * nothing of synplug's is left: on this kernel `--via auto` takes the queue
 * hold, and `teardown --inbound DEV` selects it.
 */
test.serial('synplug-setup-inbound.service: its stop removes what its start set up (the queue hold on this kernel)', (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'synplug-recipes-state-'));
  const ns = `${NS}-i`;
  execFileSync(IP, ['netns', 'add', ns]);
  const synplug = (words: string[]) =>
    spawnSync(IP, ['netns', 'exec', ns, process.execPath, BUNDLE, ...words.map((w) => (w === 'eth0' ? 'sprin' : w)).slice(1)], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, SYNPLUG_STATE_DIR: stateDir },
    });
  t.teardown(() => {
    synplug(['synplug', 'teardown']);
    spawnSync(IP, ['netns', 'del', ns]);
    rmSync(stateDir, { recursive: true, force: true });
  });
  execFileSync(IP, ['-n', ns, 'link', 'add', 'sprin', 'type', 'veth', 'peer', 'name', 'sprpeer']);
  execFileSync(IP, ['-n', ns, 'link', 'set', 'sprin', 'up']);
  const start = synplug(unitWords('synplug-setup-inbound.service', 'ExecStart'));
  t.is(start.status, 0, start.stdout + start.stderr);
  const stop = synplug(unitWords('synplug-setup-inbound.service', 'ExecStop'));
  t.is(stop.status, 0, stop.stdout + stop.stderr);
  const check = synplug(['synplug', 'check']);
  t.is(check.status, 1, `check after the stop: nothing set up\n${check.stdout}${check.stderr}`);
  t.notRegex(inNs(ns, ['/usr/sbin/nft', 'list', 'tables']), /synplug/);
  t.notRegex(inNs(ns, [IP, '-br', 'link']), /spifb/);
});
