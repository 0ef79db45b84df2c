/**
 * Prometheus metrics of the reloads (src/guard/metrics.ts): the totals
 * accumulate across calls in the state directory, the file is the text
 * format `promtool check metrics` accepts (the oracle: Debian's
 * `prometheus` package), and a bad `--metrics-file` is exit 2 before
 * anything is held.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addReload, checkMetricsFile, METRICS_STATE_FILE, metricsText, recordMetrics } from '../../src/guard/metrics.js';
import { NoDeviceError, StateFileError } from '../../src/guard/errors.js';
import { accounted } from '../../src/guard/accounting.js';
import { protect } from '../../src/guard/protect.js';
import { SynplugError, UsageError } from '../../src/netlink/errors.js';

const BIN = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));
const PROMTOOL = '/usr/bin/promtool';

const report = (o: { refused?: number; reset?: number; dropped?: number; holdMs: number }) => {
  const refused = o.refused ?? 0;
  const reset = o.reset ?? 0;
  const dropped = o.dropped ?? 0;
  return { heldSyns: 4, holdMs: o.holdMs, dropped, refused, reset, listenerDrops: 0, lossless: refused + reset + dropped === 0 };
};

function dirs() {
  const root = mkdtempSync(join(tmpdir(), 'synplug-metrics-'));
  const state = join(root, 'state');
  const textfile = join(root, 'textfile');
  mkdirSync(state, { mode: 0o700 });
  mkdirSync(textfile, { mode: 0o755 });
  return { root, state, textfile, file: join(textfile, 'synplug.prom') };
}

/** The samples of a metrics text, `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of text.split('\n')) if (l && !l.startsWith('#')) m.set(l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1)));
  return m;
}

test('the totals accumulate across reloads (lossless, lost, failed) and the file passes promtool check metrics', async (t) => {
  const d = dirs();
  const target = checkMetricsFile(d.file);
  await recordMetrics(d.state, target, 'queue', { exitCode: 0, report: report({ holdMs: 30 }) });
  await recordMetrics(d.state, target, 'queue', { exitCode: 0, report: report({ holdMs: 1500, refused: 3, reset: 1 }) });
  await recordMetrics(d.state, target, 'queue', 'failed');
  await recordMetrics(d.state, target, 'queue', { exitCode: 2, report: report({ holdMs: 200, dropped: 2 }) });
  // another hold's label: its own series; a change of nothing (a manual plug) writes the file, counting nothing
  await recordMetrics(d.state, target, 'inbound:eth0+local', { exitCode: 0, report: report({ holdMs: 70 }) });
  await recordMetrics(d.state, target, 'inbound:eth0+local', null);
  const text = readFileSync(d.file, 'utf8');
  const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  t.is(check.status, 0, `${check.stdout}${check.stderr}`);
  t.is(`${check.stdout}${check.stderr}`.trim(), '', 'no lint remark either');
  const s = samples(text);
  t.is(s.get('synplug_reloads_total{result="lossless",hold="queue"}'), 1);
  t.is(s.get('synplug_reloads_total{result="lost",hold="queue"}'), 1);
  t.is(s.get('synplug_reloads_total{result="failed",hold="queue"}'), 2, 'a failed command and a protect that threw');
  t.is(s.get('synplug_held_syns_total{hold="queue"}'), 12);
  t.is(s.get('synplug_refused_total{hold="queue"}'), 3);
  t.is(s.get('synplug_reset_total{hold="queue"}'), 1);
  t.is(s.get('synplug_dropped_total{hold="queue"}'), 2);
  t.is(s.get('synplug_hold_seconds_count{hold="queue"}'), 3);
  t.is(s.get('synplug_hold_seconds_bucket{hold="queue",le="0.05"}'), 1);
  t.is(s.get('synplug_hold_seconds_bucket{hold="queue",le="0.25"}'), 2);
  t.is(s.get('synplug_hold_seconds_bucket{hold="queue",le="2.5"}'), 3);
  t.is(s.get('synplug_hold_seconds_bucket{hold="queue",le="+Inf"}'), 3);
  t.true(Math.abs(s.get('synplug_hold_seconds_sum{hold="queue"}')! - 1.73) < 1e-9);
  t.is(s.get('synplug_reloads_total{result="lossless",hold="inbound:eth0+local"}'), 1);
  t.is(s.get('synplug_reloads_total{result="failed",hold="inbound:eth0+local"}'), 0, 'the change of nothing counted nothing');
  t.is(s.get('synplug_held_syns_total{hold="inbound:eth0+local"}'), 4);
  t.is(s.get('synplug_hold_seconds_count{hold="inbound:eth0+local"}'), 1);
  t.false(existsSync(join(d.textfile, `.synplug.prom.${process.pid}.tmp`)), 'the temporary file was renamed');
});

test('a report whose dropped count was lost (null: a queue holder died during the hold) adds nothing to synplug_dropped_total; the reload counts as lost', (t) => {
  const base = {
    reloads: { lossless: 0, lost: 0, failed: 0, uncounted: 0 },
    heldSyns: 0,
    refused: 0,
    reset: 0,
    dropped: 0,
    holdBuckets: new Array(12).fill(0),
    holdSum: 0,
    holdCount: 0,
  };
  const lost = { heldSyns: 2, holdMs: 700, dropped: null, refused: 0, reset: 0, listenerDrops: 0, lossless: false, failed: ['its holder died'] };
  const n = addReload(addReload(base, { exitCode: 0, report: lost }), { exitCode: 0, report: { ...lost, dropped: 3, failed: undefined } });
  t.is(n.dropped, 3);
  t.is(n.reloads.lost, 2);
  const text = metricsText({ version: 2, holds: { queue: n } } as unknown as Parameters<typeof metricsText>[0]);
  t.regex(text, /^synplug_dropped_total\{hold="queue"\} 3$/m);
  t.regex(text, /^# HELP synplug_dropped_total .*a count lost with a queue holder that died adds nothing/m);
});

test('a damaged totals file is refused, naming it; the metrics file is left as it was', async (t) => {
  const d = dirs();
  const target = checkMetricsFile(d.file);
  await recordMetrics(d.state, target, 'queue', { exitCode: 0, report: report({ holdMs: 30 }) });
  const before = readFileSync(d.file, 'utf8');
  writeFileSync(join(d.state, METRICS_STATE_FILE), '{"version":2,"holds":{"queue":{"reloads":{}}}}');
  await t.throwsAsync(recordMetrics(d.state, target, 'queue', 'failed'), {
    instanceOf: StateFileError,
    message: new RegExp(`${join(d.state, METRICS_STATE_FILE)} is not a metrics record`),
  });
  t.is(readFileSync(d.file, 'utf8'), before);
});

test('--metrics-file: a missing directory, an unsafe one, or no file name is a usage error', (t) => {
  const d = dirs();
  t.throws(() => checkMetricsFile(join(d.root, 'absent', 'x.prom')), { instanceOf: UsageError, message: /does not exist/ });
  chmodSync(d.textfile, 0o777);
  const unsafe = t.throws(() => checkMetricsFile(d.file), { instanceOf: UsageError, message: /not safe to write in/ });
  t.true(unsafe?.message.startsWith(`--metrics-file ${d.file}: its directory is not safe to write in: ${d.textfile} is writable by everyone`), unsafe?.message);
  t.notRegex(unsafe?.message ?? '', /state directory|--state-dir/, 'it is the metrics directory, not the state directory');
  chmodSync(d.textfile, 0o1777);
  const shared = t.throws(() => checkMetricsFile(d.file), { instanceOf: UsageError })?.message ?? '';
  // 0755, not the state directory's 0700: node_exporter reads the file as another user
  t.regex(
    shared,
    /it is a shared directory \(sticky\): use a directory of your own inside it \(mode 0755: node_exporter, another user, reads the file there\)/,
  );
  t.notRegex(shared, /chmod|synplug creates/, 'no chmod of a shared directory; synplug does not create a metrics directory');
  t.throws(() => checkMetricsFile(`${d.root}/`), { instanceOf: UsageError, message: /give a file name/ });
  t.throws(() => checkMetricsFile('synplug.prom'), {
    instanceOf: UsageError,
    message: /^--metrics-file synplug\.prom is a relative path: give it absolute \(from here: \/.*synplug\.prom\)$/,
  });
});

test('--metrics-file never replaces a file synplug did not write: a name not ending in .prom, or a file there that is not its metrics (checked again at the write)', async (t) => {
  const d = dirs();
  t.throws(() => checkMetricsFile('/etc/passwd'), { instanceOf: UsageError, message: /--metrics-file \/etc\/passwd: the name must end in \.prom/ });
  t.throws(() => checkMetricsFile(join(d.textfile, '.prom')), { instanceOf: UsageError, message: /must end in \.prom/ });
  const foreign = join(d.textfile, 'other.prom');
  writeFileSync(foreign, 'root:x:0:0:root:/root:/bin/bash\n', { mode: 0o640 });
  t.throws(() => checkMetricsFile(foreign), {
    instanceOf: UsageError,
    message: /it exists and is not a metrics file synplug wrote, which synplug does not replace/,
  });
  // planted after the check: the write refuses it too, before any total changes
  const target = checkMetricsFile(d.file);
  writeFileSync(d.file, 'someone else\n');
  await t.throwsAsync(recordMetrics(d.state, target, 'queue', 'failed'), { instanceOf: UsageError, message: /not a metrics file synplug wrote/ });
  t.is(readFileSync(d.file, 'utf8'), 'someone else\n');
  t.false(existsSync(join(d.state, METRICS_STATE_FILE)), 'no total changed');
  // synplug's own file is replaced
  writeFileSync(d.file, '');
  t.throws(() => checkMetricsFile(d.file), { instanceOf: UsageError }, "an empty file is not synplug's either");
  writeFileSync(d.file, '# HELP synplug_reloads_total old\n');
  await recordMetrics(d.state, checkMetricsFile(d.file), 'queue', 'failed');
  t.regex(readFileSync(d.file, 'utf8'), /synplug_reloads_total\{result="failed",hold="queue"\} 1/);
  // the CLI: exit 2 and the file as it was, for release, plug and setup
  for (const args of [['release'], ['plug'], ['setup', '--via', 'queue', '--dry-run']]) {
    const r = spawnSync(process.execPath, [BIN, ...args, '--state-dir', d.state, '--metrics-file', foreign], { encoding: 'utf8', timeout: 30_000 });
    t.is(r.status, 2, `${args[0]}: ${r.stderr}`);
  }
  t.is(readFileSync(foreign, 'utf8'), 'root:x:0:0:root:/root:/bin/bash\n');
});

test('protect --metrics-file in a missing directory: exit 2, the command not run, nothing written', (t) => {
  const d = dirs();
  const ran = join(d.root, 'ran');
  const r = spawnSync(process.execPath, [BIN, 'protect', '--state-dir', d.state, '--metrics-file', join(d.root, 'absent', 'x.prom'), '--', 'touch', ran], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.is(r.status, 2, r.stderr);
  t.regex(r.stderr, /--metrics-file .*absent\/x\.prom: the directory .* does not exist/);
  t.false(existsSync(ran));
  t.false(existsSync(join(d.state, METRICS_STATE_FILE)));
});

test('plug, release and setup --metrics-file in a missing directory: exit 2, nothing held, released, set up or written', (t) => {
  const d = dirs();
  const bad = join(d.root, 'absent', 'x.prom');
  for (const args of [['plug'], ['release'], ['setup', '--via', 'queue']]) {
    const r = spawnSync(process.execPath, [BIN, ...args, '--state-dir', d.state, '--metrics-file', bad], { encoding: 'utf8', timeout: 30_000 });
    t.is(r.status, 2, `${args[0]}: ${r.stderr}`);
    t.regex(r.stderr, /--metrics-file .*absent\/x\.prom: the directory .* does not exist/, args[0]);
  }
  t.deepEqual(readdirSync(d.state), [], 'the state directory is still empty: no record, no history, no totals');
});

// rv19's MEDIUM: the metrics file was written 0600, so node_exporter's textfile collector, which runs as the
// prometheus user, could not read it. Now 0644 whatever the umask; the totals in the state directory stay 0600.
test('the metrics file is mode 0644 (node_exporter reads it as the prometheus user), even under umask 077; metrics.json stays 0600', async (t) => {
  const d = dirs();
  chmodSync(d.root, 0o755); // mkdtemp's 0700 would keep any other user out of the textfile directory
  const old = process.umask(0o077);
  try {
    await recordMetrics(d.state, checkMetricsFile(d.file), 'queue', { exitCode: 0, report: report({ holdMs: 30 }) });
    await recordMetrics(d.state, checkMetricsFile(d.file), 'queue', { exitCode: 0, report: report({ holdMs: 40 }) });
  } finally {
    process.umask(old);
  }
  t.is(statSync(d.file).mode & 0o777, 0o644);
  t.is(statSync(join(d.state, METRICS_STATE_FILE)).mode & 0o777, 0o600, 'the totals stay owner-only');
  // the oracle: the prometheus user (Debian's prometheus-node-exporter package makes it) reads the file
  const id = (flag: string) => Number(spawnSync('id', [flag, 'prometheus'], { encoding: 'utf8' }).stdout.trim());
  const read = spawnSync('cat', [d.file], { uid: id('-u'), gid: id('-g'), encoding: 'utf8' });
  t.is(read.status, 0, read.stderr);
  t.is(samples(read.stdout).get('synplug_reloads_total{result="lossless",hold="queue"}'), 2);
  const totals = spawnSync('cat', [join(d.state, METRICS_STATE_FILE)], { uid: id('-u'), gid: id('-g'), encoding: 'utf8' });
  t.not(totals.status, 0, 'the state directory is not readable to it');
});

// rvu15's MEDIUM: a usage error (exit 2) counted as a failed reload. A reload refused for its arguments was never
// tried: it is not counted, and the file is left as it was; a reload refused later (not set up, say) still is.
test('a usage error (exit 2) is no reload: not counted as failed, the metrics file left as it was; a refusal that is not a usage error still counts failed', async (t) => {
  const d = dirs();
  await recordMetrics(d.state, checkMetricsFile(d.file), 'none', { exitCode: 0, report: report({ holdMs: 30 }) });
  const before = readFileSync(d.file, 'utf8');
  const opts = { stateDir: d.state, metricsFile: d.file };
  await t.throwsAsync(protect({ command: [], ...opts }), { instanceOf: UsageError, message: /no command given/ });
  await t.throwsAsync(
    accounted(
      'protect',
      opts,
      () => Promise.reject(new NoDeviceError('eth9')),
      () => ({ holds: [], change: null }),
    ),
    { instanceOf: NoDeviceError },
  );
  t.is(readFileSync(d.file, 'utf8'), before, 'neither usage error counted');
  await t.throwsAsync(
    accounted(
      'protect',
      opts,
      () => Promise.reject(new SynplugError('not set up', 'not-set-up')),
      () => ({ holds: [], change: null }),
    ),
  );
  t.is(samples(readFileSync(d.file, 'utf8')).get('synplug_reloads_total{result="failed",hold="none"}'), 1, 'a refusal of another kind is a failed reload');
});

test("regression: a metrics file another user owns, or hard-linked, was refused as 'not a regular file synplug can read (or is larger...)'; now the refusal names the real reason", (t) => {
  const d = dirs();
  const ours = '# HELP synplug_reloads_total reloads\n';
  writeFileSync(d.file, ours, { mode: 0o644 });
  linkSync(d.file, join(d.root, 'other-name'));
  const linked = t.throws(() => checkMetricsFile(d.file), { instanceOf: UsageError })?.message ?? '';
  t.regex(linked, /it exists and has 2 names \(a hard link\)/);
  t.notRegex(linked, /not a regular file|larger than/);
  const theirs = join(d.textfile, 'theirs.prom');
  writeFileSync(theirs, ours, { mode: 0o644 });
  if (process.geteuid?.() === 0) {
    chownSync(theirs, 65534, 65534);
    const owned = t.throws(() => checkMetricsFile(theirs), { instanceOf: UsageError })?.message ?? '';
    t.regex(owned, /it exists and belongs to uid 65534, neither root nor this user/);
    t.notRegex(owned, /not a regular file|larger than/);
  }
  const big = join(d.textfile, 'big.prom');
  writeFileSync(big, ours + 'x'.repeat(2 * 1024 * 1024));
  t.regex(
    t.throws(() => checkMetricsFile(big), { instanceOf: UsageError })?.message ?? '',
    /it exists and is \d+ bytes, larger than a metrics file synplug writes/,
  );
  mkdirSync(join(d.textfile, 'dir.prom'));
  t.regex(t.throws(() => checkMetricsFile(join(d.textfile, 'dir.prom')), { instanceOf: UsageError })?.message ?? '', /it exists and is not a regular file,/);
});

test('regression (root): --metrics-file in /run/netns or the state directory through a bind mount passed the path check; now refused by device and inode', (t) => {
  if (process.geteuid?.() !== 0) {
    t.pass('needs root (mount --bind in a mount namespace of its own)');
    return;
  }
  const d = dirs();
  const at = join(d.root, 'bound');
  mkdirSync(at, { mode: 0o755 });
  const dist = fileURLToPath(new URL('../../dist/guard/metrics.js', import.meta.url));
  const script = `import(${JSON.stringify(dist)}).then((m) => { for (const [p, s] of [[process.argv[1], process.argv[2]]]) { try { m.checkMetricsFile(p, s); console.log('taken'); } catch (e) { console.log(e.message); } } })`;
  const run = (src: string) => {
    const r = spawnSync(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        `mkdir -p ${src} && mount --bind ${src} ${at} && exec node -e "$0" ${join(at, 'synplug.prom')} ${d.state}`,
        script,
      ],
      { encoding: 'utf8' },
    );
    return `${r.stdout}${r.stderr}`;
  };
  t.regex(run(d.state), /its directory is \S+\/state under another path .*is the state directory/);
  t.regex(run('/run/netns'), /its directory is \/run\/netns under another path .*where 'ip netns' keeps the named network namespaces/);
});
