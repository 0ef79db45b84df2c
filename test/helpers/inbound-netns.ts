/**
 * Live tests that build an inbound hold by hand (this kernel has no
 * sch_plug) need a network namespace of their own: another live file's
 * `teardown` with a damaged record sweeps every IFB of synplug's in the
 * shared one. This makes that namespace with a veth pair DEV/PEER in it, and
 * gives the tools to act there: ip and tc (`-n NS`), the CLI bundle with
 * `--netns NS --state-dir SD`, a u32 SYN-port redirect like the hold's, and
 * an IFB carrying an alias.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const IP = '/usr/sbin/ip';
export const TC = '/usr/sbin/tc';
export const CLI = fileURLToPath(new URL('../../dist/bundle/synplug.cjs', import.meta.url));

/** What {@link inboundNetns} returns: the namespace's tools; `ifindex` is DEV's, known after `create()`. */
export interface InboundNetns {
  ns: string;
  dev: string;
  ifindex: number;
  /** ip or tc in the namespace; throws as execFileSync does */
  sh(cmd: string, ...args: string[]): string;
  /** the same, ignoring failure (for clean-ups) */
  quiet(cmd: string, ...args: string[]): void;
  /** whether a link of this name exists there */
  exists(dev: string): boolean;
  /** the CLI bundle with `--state-dir SD --netns NS` appended; never rejects */
  synplug(sd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** `tc filter add dev DEV ingress protocol P pref N u32 match ip|ip6 dport PORT 0xffff action mirred egress redirect dev TO` */
  redirect(pref: string, protocol: string, port: string, to: string): string;
  /** an up IFB named `name` with this alias */
  ifb(name: string, alias: string): void;
  /** make the namespace, lo up, the veth pair; read DEV's ifindex (test.before) */
  create(): void;
  /** delete the namespace and all in it (test.after.always) */
  destroy(): void;
}

/**
 * A namespace `NS-<pid>` with the veth pair `dev`/`peer`.
 * @param prefix namespace name before `-<pid>`
 */
export function inboundNetns(prefix: string, dev: string, peer: string): InboundNetns {
  const ns = `${prefix}-${process.pid}`;
  const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, ['-n', ns, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const quiet = (cmd: string, ...args: string[]) => {
    try {
      sh(cmd, ...args);
    } catch {
      /* not there */
    }
  };
  const self: InboundNetns = {
    ns,
    dev,
    ifindex: 0,
    sh,
    quiet,
    exists(name) {
      try {
        sh(IP, 'link', 'show', 'dev', name);
        return true;
      } catch {
        return false;
      }
    },
    synplug(sd, ...args) {
      return new Promise((resolve) => {
        // the options before a '--' (protect's command follows it: appended after, they were the command's words)
        const cut = args.includes('--') ? args.indexOf('--') : args.length;
        const argv = [...args.slice(0, cut), '--state-dir', sd, '--netns', ns, ...args.slice(cut)];
        execFile(process.execPath, [CLI, ...argv], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    },
    redirect(pref, protocol, port, to) {
      return sh(
        TC,
        ...[
          'filter',
          'add',
          'dev',
          dev,
          'ingress',
          'protocol',
          protocol,
          'pref',
          pref,
          'u32',
          'match',
          protocol === 'ip' ? 'ip' : 'ip6',
          'dport',
          port,
          '0xffff',
        ],
        ...['action', 'mirred', 'egress', 'redirect', 'dev', to],
      );
    },
    ifb(name, alias) {
      sh(IP, 'link', 'add', name, 'type', 'ifb');
      sh(IP, 'link', 'set', name, 'alias', alias);
      sh(IP, 'link', 'set', name, 'up');
    },
    create() {
      if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`);
      execFileSync(IP, ['netns', 'add', ns]);
      sh(IP, 'link', 'set', 'lo', 'up');
      sh(IP, 'link', 'add', dev, 'type', 'veth', 'peer', 'name', peer);
      self.ifindex = (JSON.parse(sh(IP, '-j', 'link', 'show', 'dev', dev)) as Array<{ ifindex: number }>)[0].ifindex;
    },
    destroy() {
      try {
        execFileSync(IP, ['netns', 'del', ns]);
      } catch {
        /* not made */
      }
    },
  };
  return self;
}

/**
 * Whether the local queue hold's table (`inet synplug_queue`) and address are
 * in the namespace, as `nft list tables` and `ip -j addr` list them.
 * @param addr the hold's address on lo
 */
export function queueHoldOf(n: InboundNetns, addr: string): { table: boolean; addr: boolean } {
  const tables = execFileSync(IP, ['netns', 'exec', n.ns, '/usr/sbin/nft', 'list', 'tables'], { encoding: 'utf8' });
  const addrs = JSON.parse(n.sh(IP, '-j', 'addr', 'show', 'dev', 'lo')) as Array<{ addr_info: Array<{ local: string }> }>;
  return { table: /table inet synplug_queue\b/.test(tables), addr: addrs[0].addr_info.some((a) => a.local === addr) };
}
