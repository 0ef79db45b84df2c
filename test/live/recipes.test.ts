/**
 * docs/recipes, each checked by its own tool as far as this machine allows:
 * the systemd units and drop-ins by `systemd-analyze verify` (next to
 * Debian's own haproxy.service and nginx.service, which the drop-ins amend),
 * the server settings by `haproxy -c` and `nginx -t` (nginx in a namespace of
 * its own that has the hold's address, because `reuseport` makes `-t` bind),
 * the --check values of the drop-ins split by synplug's own parser into the
 * argv that then runs and passes, the Kubernetes manifests by a YAML parser,
 * the container scripts by `sh -n`. Kubernetes itself and docker are not run.
 */
import test from 'ava';
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
  const ours = r.out.split('\n').filter((l) => /synplug|myapp/.test(l));
  t.deepEqual(ours, [], r.out);
});

test('the drop-ins are read: a drop-in naming a command that does not exist fails verify', (t) => {
  for (const unit of ['haproxy', 'nginx']) {
    const dir = unitDir((name, text) =>
      name === `${unit}.service.d/synplug.conf` ? text.replace(/^ExecReload=(\S*)synplug /m, 'ExecReload=/nonexistent/synplug ') : text,
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

test('units: ExecStopPost= releases only an orphaned plug (a protected restart runs it between stop and start); Wants=, not Requires=, synplug-setup', (t) => {
  for (const file of ['haproxy.service.d/synplug.conf', 'nginx.service.d/synplug.conf', 'myapp.service', 'myapp-restart.service']) {
    const text = readFileSync(join(RECIPES, 'systemd', file), 'utf8');
    const post = [...text.matchAll(/^ExecStopPost=(.*)$/gm)].map((m) => m[1]);
    t.deepEqual(post, ['synplug release --orphaned'], file);
    t.notRegex(text, /^Requires=/m, file);
    t.regex(text, /^Wants=synplug-setup\.service$/m, file);
    t.regex(text, /^After=synplug-setup\.service$/m, file);
  }
});

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
