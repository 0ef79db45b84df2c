/**
 * Test helper for the inbound tc tests (test/live/tc-inbound.test.ts on
 * this kernel, test/kernel/tc-inbound.test.ts in the VM): a second network
 * namespace, a TCP client run there, and the comparison of our filter
 * listings with `tc -s [-j] filter show dev X PARENT`.
 */
import type { ExecutionContext } from 'ava';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { NetlinkConnection } from '../../src/netlink/connection.js';
import { listFilters, formatFilterText, type FilterEntry } from '../../src/tc/index.js';
import { resolveActionDeviceNames } from '../../src/tc/actions/list.js';

export const IP = '/usr/sbin/ip';
export const TC = '/usr/sbin/tc';
export const NFT = '/usr/sbin/nft';

/** Run a tool, stdout as text; its stderr is kept out of the test output. */
export function sh(cmd: string, ...args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
/** Run a tool, ignoring its failure. */
export function quietly(cmd: string, ...args: string[]): void {
  try {
    sh(cmd, ...args);
  } catch {
    /* gone */
  }
}

/**
 * `tc filter add dev DEV PARENT WORDS...` through tc itself (the oracle
 * builds the filter); `words` is the rest of tc's command line, split on
 * white space.
 */
export function tcFilterAdd(dev: string, parent: string, words: string): string {
  return sh(TC, 'filter', 'add', 'dev', dev, parent, ...words.trim().split(/\s+/));
}

/**
 * tc's own IPv4 SYN match on DEV's ingress, as the inbound hold's u32 filter
 * matches when the IP header has no options (capture 43's command):
 * protocol 6, SYN set and ACK clear (`match u8 0x02 0x12 at 33`: a 20-byte
 * IP header, then TCP's byte 13), destination port `port`; mirred egress
 * redirect to `ifb`.
 */
export function tcSynRedirect(dev: string, pref: number, port: number, ifb: string): string {
  return tcFilterAdd(
    dev,
    'ingress',
    `protocol ip pref ${pref} u32 match ip protocol 6 0xff match u8 0x02 0x12 at 33 match ip dport ${port} 0xffff action mirred egress redirect dev ${ifb}`,
  );
}

/** A process in a network namespace of its own (`unshare --net sleep`); resolves once it is there. */
export async function otherNamespace(): Promise<ChildProcess> {
  const mine = readlinkSync('/proc/self/ns/net');
  const p = spawn('unshare', ['--net', 'sleep', '1800'], { stdio: 'ignore' });
  for (let i = 0; i < 1000; i++) {
    try {
      if (readlinkSync(`/proc/${p.pid}/ns/net`) !== mine) return p;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('unshare did not enter a new network namespace');
}

/** Run a tool in that namespace (nsenter), synchronously: only for set-up, never while this process must answer traffic. */
export function inNs(ns: ChildProcess, ...args: string[]): string {
  return execFileSync('nsenter', ['-t', String(ns.pid), '-n', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** N connections, each sending 3000 bytes and reading them back (several data segments and ACKs each way); IP_OPTIONS (4 bytes: NOP NOP NOP EOL) on request. */
const CLIENT = `
import socket, sys
fam = socket.AF_INET if sys.argv[1] == '4' else socket.AF_INET6
host, port, n, opts = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == 'opts'
for i in range(n):
    s = socket.socket(fam, socket.SOCK_STREAM)
    if opts:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([1, 1, 1, 0]))
    s.settimeout(30)
    s.connect((host, port))
    s.sendall(b'x' * 3000)
    got = b''
    while len(got) < 3000:
        d = s.recv(65536)
        if not d:
            break
        got += d
    s.close()
    assert len(got) == 3000, len(got)
print('ok')
`;

/**
 * Run the client in `ns` without blocking this process's event loop (the
 * echo server lives here). Resolves with 'ok' when every connection echoed.
 */
export function runClient(ns: ChildProcess, family: '4' | '6', host: string, port: number, n: number, opts = false): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'nsenter',
      ['-t', String(ns.pid), '-n', 'python3', '-c', CLIENT, family, host, String(port), String(n), opts ? 'opts' : 'plain'],
      { encoding: 'utf8', timeout: 300_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
    );
  });
}

/** JSON.parse for tc -j: a key repeated in an object becomes an array of its values; a bare string in an object (u32's "    offset ") is skipped. */
export function parseTcJson(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i])) i++;
  };
  const value = (): unknown => {
    ws();
    if (text[i] === '{') {
      i++;
      const o: Record<string, unknown> = {};
      const rep = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        const k = value() as string;
        ws();
        if (text[i] === ':') {
          i++;
          const v = value();
          if (k in o) {
            if (!rep.has(k)) {
              o[k] = [o[k]];
              rep.add(k);
            }
            (o[k] as unknown[]).push(v);
          } else o[k] = v;
          ws();
        }
        if (text[i++] === '}') return o;
      }
    }
    if (text[i] === '[') {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i++] === ']') return a;
      }
    }
    const m = /^("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i))!;
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  return value();
}

/**
 * Our entry in tc -j's shape: without what tc does not print in JSON
 * (ifindex, dev, handle, the asked parent, u32's text-only "terminal", the
 * u32 offset fields tc emits as invalid JSON, mirred's ifindex), with u32's
 * repeated "match"/"success" keys as the parser above reads them.
 */
export function tcShape(e: FilterEntry): Record<string, unknown> {
  const { ifindex: _i, dev: _d, handle: _h, ingress: _g, egress: _e, ...rest } = e;
  const out = rest as Record<string, unknown>;
  if (!out.options) return out;
  const o = { ...(out.options as Record<string, unknown>) };
  delete o.terminal;
  delete o.eat;
  if (Array.isArray(o.actions)) o.actions = (o.actions as Array<Record<string, unknown>>).map(({ ifindex: _x, ...a }) => a);
  if (Array.isArray(o.match)) {
    const ms = (o.match as Array<Record<string, unknown>>).map(({ success: _s, ...m }) => m);
    const succ = (o.match as Array<Record<string, unknown>>).filter((m) => m.success !== undefined).map((m) => m.success);
    o.match = ms.length === 1 ? ms[0] : ms;
    if (succ.length) o.success = o.success === undefined ? (succ.length === 1 ? succ[0] : succ) : [o.success, ...succ];
  }
  out.options = o;
  return out;
}
export function theirsShape(x: Record<string, unknown>): Record<string, unknown> {
  const o = x.options as Record<string, unknown> | undefined;
  if (o && ' eat ' in o) delete o[' eat '];
  return x;
}

/** Our listing of one parent, mirred targets named. */
export async function ourListing(conn: NetlinkConnection, dev: string, parent: string, stats = true): Promise<FilterEntry[]> {
  return resolveActionDeviceNames(conn, await listFilters(conn, { dev, parent, stats }));
}

const TIME_FIELDS = ['installed', 'last_used', 'first_used', 'expires'] as const;
type Times = Partial<Record<(typeof TIME_FIELDS)[number], number>>;

function actionsOf(entries: ReadonlyArray<Record<string, unknown>>): Array<Record<string, unknown>> {
  return entries.flatMap((e) => ((e.options as Record<string, unknown> | undefined)?.actions as Array<Record<string, unknown>> | undefined) ?? []);
}

/** The action times tc printed as text, in order: ` installed N sec used N sec firstused N sec expires N sec` after each `index ... bind N`. */
function textTimes(text: string): Times[] {
  const out: Times[] = [];
  for (const m of text.matchAll(/^\t ?index \d+ ref -?\d+ bind -?\d+(.*)$/gm)) {
    const t: Times = {};
    for (const [word, f] of [
      ['installed', 'installed'],
      ['used', 'last_used'],
      ['firstused', 'first_used'],
      ['expires', 'expires'],
    ] as const) {
      const v = new RegExp(` ${word} (\\d+) sec`).exec(m[1]);
      if (v) t[f] = Number(v[1]);
    }
    out.push(t);
  }
  return out;
}

/** A copy of the entries whose actions carry the given times (in order), other fields untouched. */
function withTimes(entries: FilterEntry[], times: Times[]): FilterEntry[] {
  const copy = structuredClone(entries);
  const acts = actionsOf(copy as unknown as Array<Record<string, unknown>>);
  acts.forEach((a, i) => {
    for (const f of TIME_FIELDS) delete a[f];
    Object.assign(a, times[i] ?? {});
  });
  return copy;
}

interface Comparison {
  /** bracket or count mismatches, as sentences */
  problems: string[];
  after: FilterEntry[];
  ourText: string;
  text: string;
  ourJson: unknown;
  theirs: unknown;
}

async function compareOnce(conn: NetlinkConnection, dev: string, parent: string, stats: boolean): Promise<Comparison> {
  const opts = { stats, omitParent: true };
  const s = stats ? ['-s'] : [];
  const before = await ourListing(conn, dev, parent, stats);
  const text = sh(TC, ...s, 'filter', 'show', 'dev', dev, parent);
  const json = sh(TC, ...s, '-j', 'filter', 'show', 'dev', dev, parent);
  const after = await ourListing(conn, dev, parent, stats);
  const theirs = (parseTcJson(json) as Array<Record<string, unknown>>).map(theirsShape);
  const jsonTimes: Times[] = actionsOf(theirs).map((a) => Object.fromEntries(TIME_FIELDS.filter((f) => a[f] !== undefined).map((f) => [f, a[f] as number])));
  const tTimes = textTimes(text);
  const b = actionsOf(before as unknown as Array<Record<string, unknown>>);
  const a = actionsOf(after as unknown as Array<Record<string, unknown>>);
  const problems: string[] = [];
  if (b.length !== a.length) problems.push(`${dev} ${parent}: ${b.length} actions before, ${a.length} after`);
  for (const [what, times] of [
    ['text', tTimes],
    ['json', jsonTimes],
  ] as const) {
    if (times.length !== a.length) {
      problems.push(`${dev} ${parent}: ${what}: ${times.length} sets of times for ${a.length} actions`);
      continue;
    }
    times.forEach((tm, i) => {
      for (const f of TIME_FIELDS) {
        // a time of 0 clock ticks is not printed (tc's print_tm): absent means "0 ticks" at that reading
        if (tm[f] === undefined) {
          if (b[i]?.[f] !== undefined) problems.push(`${dev} ${parent} ${what} action ${i + 1} ${f}: tc printed none, we had ${b[i][f]} before`);
          continue;
        }
        const lo = (b[i]?.[f] as number | undefined) ?? 0;
        const hi = a[i][f] as number;
        if (!(lo <= tm[f]! && tm[f]! <= hi)) problems.push(`${dev} ${parent} ${what} action ${i + 1} ${f}: tc ${tm[f]} not within our ${lo}..${hi}`);
      }
    });
  }
  return {
    problems,
    after,
    ourText: withTimes(after, tTimes)
      .map((f) => formatFilterText(f, opts))
      .join(''),
    text,
    ourJson: withTimes(after, jsonTimes).map(tcShape),
    theirs,
  };
}

/**
 * tc's text and JSON of `tc [-s] [-j] filter show dev X PARENT` equal ours
 * (with `stats`, the default: -s and our listing with counters). tc prints
 * action times in whole seconds that move while the commands run (seconds
 * apart in a slow VM): our listing is taken just before and just after
 * tc's two runs; every time tc printed must lie between our two readings
 * of it, and with tc's times put in, our text and JSON must equal tc's
 * exactly (everything else, counters included, compared as is).
 *
 * The four readings are not atomic: a packet passing between them moves
 * counters and times (a VM stalled for seconds between two of them was seen
 * once). So a comparison where anything differs is taken again, up to three
 * times, each difference logged; the assertions are those of the last one,
 * and every one of them must hold within one set of readings.
 * @returns our later listing
 */
export async function sameAsTc(t: ExecutionContext, conn: NetlinkConnection, dev: string, parent: string, stats = true): Promise<FilterEntry[]> {
  let c!: Comparison;
  for (let attempt = 1; attempt <= 3; attempt++) {
    c = await compareOnce(conn, dev, parent, stats);
    const clean = c.problems.length === 0 && c.ourText === c.text && isDeepStrictEqual(c.ourJson, c.theirs);
    if (clean) break;
    if (attempt < 3) t.log(`${dev} ${parent}: readings differed (attempt ${attempt}), taking them again: ${c.problems.join('; ') || 'text or JSON differs'}`);
  }
  for (const p of c.problems) t.fail(p);
  t.is(c.ourText, c.text, `${dev} ${parent}: text`);
  t.deepEqual(c.ourJson, c.theirs, `${dev} ${parent}: json`);
  return c.after;
}
