/**
 * The bench's surroundings: the isolation check, the reference tools, the
 * build, and devices of its own in the network namespace.
 *
 * @module
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/lib/../..). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Reference tools, by absolute path (node_modules/.bin may shadow names on PATH). */
export const TC = '/usr/sbin/tc';
export const IP = '/usr/sbin/ip';
export const NL_QDISC_ADD = '/usr/bin/nl-qdisc-add';
export const GNU_TIME = '/usr/bin/time';

/**
 * Debian's libnl-utils looks for its qdisc modules in
 * /usr/lib/x86_64-linux-gnu/libnl/cli/qdisc/, but the package installs them
 * in .../libnl-3/cli/qdisc/, so `nl-qdisc-add ... pfifo` fails with "Unable
 * to load module". Preloading the module registers it at start-up (its
 * constructor calls nl_cli_tc_register), so libnl never needs the dlopen.
 */
export function libnlModuleEnv(kind: string): NodeJS.ProcessEnv | undefined {
  for (const dir of ['/usr/lib/x86_64-linux-gnu/libnl-3/cli/qdisc', '/usr/lib/aarch64-linux-gnu/libnl-3/cli/qdisc', '/usr/lib/libnl-3/cli/qdisc']) {
    const so = join(dir, `${kind}.so`);
    if (existsSync(so)) return { ...process.env, LD_PRELOAD: so };
  }
  return undefined;
}

/** Result of {@link sh}. */
export interface ShResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion; throws when `check` and it fails. */
export function sh(cmd: string, args: readonly string[], opts: SpawnSyncOptions & { check?: boolean } = {}): ShResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...opts });
  const res = { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
  if ((opts.check ?? true) && (r.error || r.status !== 0)) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}): ${res.stderr.trim().slice(0, 500)}`);
  }
  return res;
}

function netnsId(pid: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/**
 * Refuse to run outside a network namespace of scripts/in-netns.sh: the
 * bench creates devices and qdiscs. Both the environment mark and a network
 * namespace other than PID 1's are required.
 */
export function assertIsolated(): void {
  const own = netnsId('self');
  const init = netnsId('1');
  if (process.env.SYNPLUG_IN_NETNS !== '1' || own === undefined || own === init) {
    process.stderr.write(
      'bench: run through scripts/in-netns.sh (npm run bench): it creates devices and qdiscs and must not touch the host network namespace\n',
    );
    process.exit(2);
  }
}

/** Which reference tools are missing, with the Debian package to install. */
export function missingTools(): string[] {
  const need: Array<[string, string]> = [
    [TC, 'iproute2'],
    [IP, 'iproute2'],
    [NL_QDISC_ADD, 'libnl-utils'],
    [GNU_TIME, 'time'],
  ];
  return need.filter(([p]) => !existsSync(p)).map(([p, pkg]) => `${p} (Debian package ${pkg})`);
}

/** Build dist/ and the CLI bundle the class-list bench spawns (what `npm run build` does: tsc, then scripts/bundle.mjs). */
export function build(): void {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed (npx tsc -p tsconfig.json):\n${(r.stdout + r.stderr).trim().slice(0, 2000)}`);
  const b = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`bundle failed (node scripts/bundle.mjs):\n${(b.stdout + b.stderr).trim().slice(0, 2000)}`);
}

/**
 * The environment for the node processes the bench starts: this one's,
 * without NODE_EXTRA_CA_CERTS. Node 20 reads and parses that certificate file
 * at every start-up (50-60 ms here, where the sandbox sets it); synplug never
 * opens a TLS connection, and a Debian machine does not set it. The bench
 * prints `node -e 0` with it too when it is set.
 */
export function nodeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Create an ifb device of ours, up. Deletes a leftover of the same name first. */
export function createIfb(name: string): number {
  sh(IP, ['link', 'del', name], { check: false });
  sh(IP, ['link', 'add', name, 'type', 'ifb']);
  sh(IP, ['link', 'set', name, 'up']);
  const j = JSON.parse(sh(IP, ['-j', 'link', 'show', name]).stdout) as Array<{ ifindex: number }>;
  return j[0].ifindex;
}

/** Delete a device of ours (ignores a missing one). */
export function deleteLink(name: string): void {
  sh(IP, ['link', 'del', name], { check: false });
}

/** What the run happened on: printed above the tables and kept in the JSON. */
export interface Machine {
  node: string;
  kernel: string;
  cpus: number;
  cpuModel: string;
  /** 1-minute load average at the start (other work on the machine skews wall times) */
  loadavg1: number;
  tc: string;
  libnl: string;
  /** the checkout measured: HEAD, and src/ files with uncommitted changes (dist/ is built from the working tree) */
  git: { head: string; dirtySrc: string[] };
}

/** Describe the machine and the reference tools' versions. */
export function machine(): Machine {
  const tcv = sh(TC, ['-V'], { check: false }).stdout.trim();
  const libnl = sh('dpkg-query', ['-W', '-f=${Version}', 'libnl-utils'], { check: false }).stdout.trim();
  return {
    node: process.version,
    kernel: release(),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    loadavg1: Number(loadavg()[0].toFixed(2)),
    tc: tcv,
    libnl: libnl ? `libnl-utils ${libnl}` : '?',
    git: {
      head: sh('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { check: false }).stdout.trim(),
      dirtySrc: sh('git', ['-C', ROOT, 'status', '--porcelain', '--', 'src'], { check: false })
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3)),
    },
  };
}
