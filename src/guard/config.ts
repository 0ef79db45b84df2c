/**
 * The guard's configuration: which device, address, mark and handles the
 * technique uses, with the defaults of the original write-up, validated
 * before anything is sent to the kernel.
 *
 * @module
 */
import { isIP } from 'node:net';
import ms from 'ms';
import { UsageError } from '../netlink/errors.js';
import { parseIp as parseIpAddress, formatIp as formatIpAddress } from '../netlink/ipaddr.js';
import { defaultStateDir, HOME_STATE_DIR } from './state-dir.js';

/** What setup builds, and what every other command looks for. */
export interface GuardConfig {
  /** device the qdisc tree sits on; default `lo` */
  dev: string;
  /** the proxy's address (IPv4 or IPv6, no prefix); default 169.254.255.254 */
  addr: string;
  /** firewall mark (u32, not 0) set on SYNs and matched by the fw filter; default 1 */
  mark: number;
  /** plug qdisc limit in bytes (u32, at least 1024); default 1048576 (1 MiB, about 14,000 SYNs) */
  limit: number;
  /** nftables table owned by synplug: `synplug` (the default; the CLI has no other) or `synplug_NAME` */
  table: string;
  /**
   * directory of the state files; default `/run/synplug` in synplug's home network namespace (that of process 1),
   * `/run/synplug/netns/<cookie>` in another one (`netns`, or `ip netns exec NAME`): state-dir.ts's defaultStateDir
   */
  stateDir: string;
}

/** The fixed shape of the qdisc tree (tc handles, as u32). */
export const TREE = {
  /** prio qdisc, root: `1:` */
  prioHandle: 0x00010000,
  /** number of prio bands */
  bands: 4,
  /** tc's default priomap: band 4 (class 1:4) receives only what the fw filter sends there */
  priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
  /** pfifo qdiscs `10:`, `20:`, `30:` in classes 1:1, 1:2, 1:3 */
  pfifo: [
    { handle: 0x00100000, parent: 0x00010001 },
    { handle: 0x00200000, parent: 0x00010002 },
    { handle: 0x00300000, parent: 0x00010003 },
  ],
  /** pfifo limit, packets */
  pfifoLimit: 1000,
  /** plug qdisc `40:` in class 1:4 */
  plugHandle: 0x00400000,
  plugParent: 0x00010004,
  /** fw filter: parent 1:, pref 1, classid 1:4 */
  filterParent: 0x00010000,
  filterPrio: 1,
  filterClassid: 0x00010004,
} as const;

/** Names inside synplug's nftables table (the local hold's marking rule). */
export const NFT_NAMES = {
  /** the base chain: type route, hook output, priority mangle */
  chain: 'output',
  /** the set of addresses marked now (the kernel-side dead man's switch: elements time out) */
  set: 'synplug_active',
} as const;

/** The names of synplug's nftables tables: `synplug` (the CLI's, always), or `synplug_NAME` through the library. */
export const SYNPLUG_TABLE = /^synplug(_[A-Za-z0-9_]{1,56})?$/;

/**
 * The options only the plug holds take (setup's `--dev`, `--mark`, `--limit`,
 * `--force`): given to setup without `--via`, they choose the plug hold; given
 * to another command where only queue holds are set up, they are refused.
 */
export const PLUG_ONLY = ['dev', 'mark', 'limit', 'force'] as const;

/** Default configuration (`stateDir`: the home namespace's; resolveConfig fills in the namespace's own). */
export const DEFAULTS: GuardConfig = {
  dev: 'lo',
  addr: '169.254.255.254',
  mark: 1,
  limit: 1048576,
  table: 'synplug',
  stateDir: HOME_STATE_DIR,
};

/**
 * Fill defaults and validate. Without `stateDir`, the default state directory
 * of the network namespace acted in (state-dir.ts's defaultStateDir: the
 * library's default namespace, else the one synplug runs in).
 * @throws {UsageError} an empty or over-long device name (IFNAMSIZ 16 incl. NUL), a bad or non-unicast
 *   address, a mark that is not a u32 or is 0, a limit under 1024 bytes or over a u32, a table not
 *   named `synplug` or `synplug_NAME`; no `stateDir` in a namespace other than home on a kernel
 *   without SO_NETNS_COOKIE (before 5.14)
 */
export function resolveConfig(partial: Partial<GuardConfig> | null = {}): GuardConfig {
  const c: GuardConfig = { ...DEFAULTS };
  for (const [k, v] of Object.entries(partial ?? {})) if (v !== undefined) (c as unknown as Record<string, unknown>)[k] = v;
  if (typeof c.dev !== 'string' || !c.dev || Buffer.byteLength(c.dev) > 15 || /[\s/:]/.test(c.dev)) {
    throw new UsageError(`bad device name '${String(c.dev)}': 1-15 characters, no spaces, '/' or ':'`);
  }
  c.addr = canonicalAddress(c.addr);
  if (!Number.isInteger(c.mark) || c.mark < 1 || c.mark > 0xffffffff) {
    throw new UsageError(`bad mark '${c.mark}': a number from 1 to 4294967295 (0 would mark nothing)`);
  }
  if (!Number.isInteger(c.limit) || c.limit < MIN_LIMIT || c.limit > 0xffffffff) {
    throw new UsageError(`bad limit '${c.limit}': bytes, from ${MIN_LIMIT} to 4294967295 (a SYN takes 60-80 bytes; a smaller limit would drop them)`);
  }
  if (typeof c.table !== 'string' || !SYNPLUG_TABLE.test(c.table)) {
    throw new UsageError(
      `bad table name '${String(c.table)}': synplug's nftables tables are named synplug or synplug_NAME (letters, digits, _; at most 64 characters), never another software's table`,
    );
  }
  if (partial?.stateDir === undefined) c.stateDir = defaultStateDir();
  if (typeof c.stateDir !== 'string' || !c.stateDir) throw new UsageError(`bad state directory '${String(c.stateDir)}'`);
  refuseLongStateDir(c.stateDir);
  return c;
}

/** sun_path of struct sockaddr_un (<linux/un.h>: char sun_path[108]): a unix socket's path, its NUL included. */
export const UNIX_PATH_MAX = 108;
/** The longest name the queue holder's socket takes in the state directory (`queue-N.sock`, N up to 65535). */
const LONGEST_HOLDER_SOCKET = 'queue-65535.sock';

/**
 * Refuse a state directory in which the queue holder's unix socket path would
 * not fit in sun_path (107 bytes and the NUL): the kernel would cut it short,
 * and the socket would land elsewhere (outside the directory, where another
 * user may listen). Checked for every command, before anything is held, so
 * that no hold can be set up there that could not be held or released.
 * @throws {UsageError} the directory's path is longer than 90 bytes (named, with the limit)
 */
export function refuseLongStateDir(stateDir: string): void {
  const max = UNIX_PATH_MAX - 1 - Buffer.byteLength(`/${LONGEST_HOLDER_SOCKET}`);
  const len = Buffer.byteLength(stateDir.replace(/\/+$/, '') || '/');
  if (len > max) {
    throw new UsageError(
      `state directory '${stateDir}' is ${len} bytes long: at most ${max} (the queue holder's socket in it, ${LONGEST_HOLDER_SOCKET}, must fit in a unix socket path of ${UNIX_PATH_MAX - 1} bytes); give a shorter --state-dir (or SYNPLUG_STATE_DIR)`,
    );
  }
}

/**
 * Refuse a loopback address for a new setup: 127.0.0.1 and ::1 are the source
 * of every local connection, so all of them would be held during a reload;
 * any other 127/8 address is never a source on lo (the kernel picks
 * 127.0.0.1), so nothing would be. `setup` refuses it, and so does every
 * command reading a record that names it (synplug never wrote that record).
 * @param addr canonical address text (from {@link resolveConfig})
 * @throws {UsageError} a loopback address
 */
export function refuseLoopback(addr: string): void {
  const ip = parseIpAddress(addr);
  const b = ip.bytes;
  const loop = ip.version === 4 ? b[0] === 127 : b.subarray(0, 15).every((x) => x === 0) && b[15] === 1;
  if (loop) {
    throw new UsageError(
      `bad address '${addr}': a loopback address cannot be the proxy's address (127.0.0.1 and ::1 are the source of every local connection, which would all be held; other 127/8 addresses are never the source, so nothing would be); give the proxy an address of its own, such as the default 169.254.255.254`,
    );
  }
}

/** The smallest plug limit accepted, bytes (about 14 SYNs). */
export const MIN_LIMIT = 1024;

/**
 * The proxy's address in canonical text (IPv6 lower-case and compressed), so
 * that it compares equal to what the kernel reports.
 * @throws {UsageError} not an address, or not a unicast address a proxy can bind
 *   (unspecified, multicast, broadcast, IPv4-mapped IPv6)
 */
export function canonicalAddress(text: unknown): string {
  if (typeof text !== 'string' || isIP(text) === 0) {
    throw new UsageError(`bad address '${String(text)}': give one IPv4 or IPv6 address, without a prefix length`);
  }
  const ip = parseIpAddress(text);
  const b = ip.bytes;
  const bad =
    ip.version === 4
      ? b.every((x) => x === 0)
        ? 'the unspecified address'
        : b.every((x) => x === 255)
          ? 'the broadcast address'
          : b[0] >= 224 && b[0] <= 239
            ? 'a multicast address'
            : undefined
      : b.every((x) => x === 0)
        ? 'the unspecified address'
        : b[0] === 0xff
          ? 'a multicast address'
          : b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff
            ? 'an IPv4-mapped address (give the IPv4 address itself)'
            : undefined;
  if (bad) throw new UsageError(`bad address '${text}': ${bad} cannot be the proxy's address`);
  return formatIpAddress(b);
}

/**
 * Parse an unsigned integer option (decimal or 0x hex).
 * @throws {UsageError} naming the option and the problem: not a whole number, negative, or too large (with the largest)
 */
export function parseUint(text: string, option: string, max = 0xffffffff): number {
  const t = text.trim();
  const range = `from 0 to ${max} (0x${max.toString(16)})`;
  if (/^-(0x[0-9a-f]+|[0-9]+)$/i.test(t)) throw new UsageError(`${option}: '${text}' is negative: give a whole number ${range}`);
  const n = /^0x[0-9a-f]+$/i.test(t) ? parseInt(t, 16) : /^[0-9]+$/.test(t) ? Number(t) : NaN;
  if (Number.isNaN(n)) throw new UsageError(`${option}: '${text}' is not a whole number (decimal or 0x hex) ${range}`);
  if (n > max) throw new UsageError(`${option}: '${text}' is too large: at most ${max} (0x${max.toString(16)})`);
  return n;
}

/**
 * Parse a duration: a bare number of seconds (`10`, `0.5`), or a number
 * with a unit as the `ms` package reads it (`500ms`, `10s`, `1.5s`, `2m`,
 * `1h`, also `10 seconds`, `2 minutes`, `1 hour`; case-insensitive).
 * @returns milliseconds, > 0, at most 24 h
 * @param minMs the smallest accepted value (default 10 ms: nftables' smallest element timeout)
 * @param minWhy why `minMs` is the smallest (said when a value is under it)
 * @param max the largest accepted value, in ms and as a message says it (default 24 h)
 * @throws {UsageError} unparsable, zero or negative, under `minMs`, or over `max`
 */
export function parseDuration(
  text: string,
  option: string,
  minMs = 10,
  minWhy = 'the kernel cannot time out a set element sooner',
  max: { ms: number; text: string } = { ms: MAX_DURATION_MS, text: '24h' },
): number {
  const t = String(text ?? '').trim();
  let v: number | undefined;
  if (/^[0-9]*\.?[0-9]+$/.test(t)) v = Number(t) * 1000;
  else if (t !== '' && t.length <= 100) {
    try {
      v = ms(t as ms.StringValue);
    } catch {
      v = undefined;
    }
  }
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new UsageError(`${option}: '${text}' is not a duration (e.g. 500ms, 10s, 1.5s, 2m, 1h; a bare number is seconds; at most 24h)`);
  if (v <= 0) throw new UsageError(`${option}: must be more than 0 (got '${text}')`);
  if (v < minMs) throw new UsageError(`${option}: at least ${minMs} ms (got '${text}'): ${minWhy}`);
  if (v > max.ms) throw new UsageError(`${option}: at most ${max.text} (got '${text}')`);
  return Math.round(v);
}

/** The longest duration any guard option takes, ms (24 h; Node's timers overflow past 2^31-1 ms, about 24.8 days). */
export const MAX_DURATION_MS = 86_400_000;

/**
 * What one option's value must be: a type, and for durations the smallest
 * value in ms. Ranges beyond the type (a mark of 0, a bad address) are
 * checked where the value is used ({@link resolveConfig}, the hold modes).
 */
type OptionKind = 'string' | 'boolean' | 'number' | 'function' | 'object' | 'strings' | 'netns' | { duration: number };

/** The configuration's options ({@link GuardConfig}) and the call's network namespace (`netns`, call-netns.ts), which every entry point takes. */
const CONFIG_OPTION_KINDS = { dev: 'string', addr: 'string', mark: 'number', limit: 'number', table: 'string', stateDir: 'string', netns: 'netns' } as const;
const SELECTOR_KINDS = { ...CONFIG_OPTION_KINDS, inbound: 'string', local: 'boolean' } as const;

/**
 * Every option of every guard entry point, with its kind: the library's
 * contract. An option not listed is refused, as is a value of another type
 * or a duration outside its range, before anything else is checked or
 * changed ({@link checkEntryOptions}).
 */
export const ENTRY_OPTIONS: Record<string, Record<string, OptionKind>> = {
  setup: { ...CONFIG_OPTION_KINDS, force: 'boolean', inbound: 'object', via: 'string', queue: 'object', metricsFile: 'string' },
  check: SELECTOR_KINDS,
  status: SELECTOR_KINDS,
  teardown: { ...SELECTOR_KINDS, hold: 'string' },
  plug: { ...CONFIG_OPTION_KINDS, maxHoldMs: { duration: 10 }, metricsFile: 'string' },
  release: { ...CONFIG_OPTION_KINDS, orphaned: 'boolean', metricsFile: 'string' },
  protect: {
    ...CONFIG_OPTION_KINDS,
    command: 'strings',
    maxHoldMs: { duration: 10 },
    waitListen: 'object',
    user: 'string',
    check: 'strings',
    onCheckOutput: 'function',
    checkTimeoutMs: { duration: 100 },
    onNotice: 'function',
    setup: 'boolean',
    metricsFile: 'string',
  },
};

/** The name of an entry point in {@link ENTRY_OPTIONS}. */
export type EntryPoint = keyof typeof ENTRY_OPTIONS;

function kindText(k: OptionKind): string {
  if (typeof k === 'object') return `a duration in ms, from ${k.duration} to ${MAX_DURATION_MS} (24 h)`;
  return {
    string: 'a string',
    boolean: 'true or false',
    number: 'a number',
    function: 'a function',
    object: 'an object',
    strings: 'an array of strings',
    netns: 'a network namespace: a name from /run/netns or a path (a string), or a file descriptor (a number)',
  }[k];
}

function fits(k: OptionKind, v: unknown): boolean {
  if (typeof k === 'object') return typeof v === 'number' && Number.isFinite(v) && v >= k.duration && v <= MAX_DURATION_MS;
  if (k === 'strings') return Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (k === 'object') return typeof v === 'object' && v !== null && !Array.isArray(v);
  if (k === 'netns') return typeof v === 'string' || typeof v === 'number';
  return typeof v === k;
}

/**
 * Check a guard entry point's options against {@link ENTRY_OPTIONS}: an
 * object (or undefined/null: no options), no option it does not know, each
 * value of its kind (undefined: absent), durations from their minimum to 24 h.
 * @param entry the entry point, e.g. `plug`
 * @param opts the options as the caller passed them
 * @throws {UsageError} naming the entry point, the option and what it must be
 */
export function checkEntryOptions(entry: EntryPoint, opts: unknown): void {
  if (opts === undefined || opts === null) return;
  if (typeof opts !== 'object' || Array.isArray(opts))
    throw new UsageError(`${entry}: the options must be an object (got ${Array.isArray(opts) ? 'an array' : typeof opts})`);
  const kinds = ENTRY_OPTIONS[entry]!;
  for (const [name, value] of Object.entries(opts)) {
    const k = kinds[name];
    if (k === undefined) throw new UsageError(`${entry}: unknown option '${name}' (its options: ${Object.keys(kinds).join(', ')})`);
    if (value !== undefined && !fits(k, value))
      throw new UsageError(`${entry}: option '${name}' must be ${kindText(k)} (got ${describe(value)})${hint(k, value)}`);
  }
}

/** What to do about a value of the wrong kind, when there is more to say than its kind. */
function hint(k: OptionKind, v: unknown): string {
  if (typeof k === 'object' && typeof v === 'string') {
    let meant: number | undefined;
    try {
      meant = v.length <= 100 ? ms(v as ms.StringValue) : undefined;
    } catch {
      meant = undefined;
    }
    const give = typeof meant === 'number' && Number.isFinite(meant) ? `: give ${Math.round(meant)} for '${v}'` : '';
    return `: the library takes milliseconds as a number (a text such as '10s' is the CLI's way)${give}`;
  }
  if (k === 'strings' && Array.isArray(v)) {
    const i = v.findIndex((x) => typeof x !== 'string');
    return `: element ${i} is ${v[i] === undefined ? 'undefined (a variable that was never set?)' : describe(v[i])}`;
  }
  return '';
}

function describe(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 40)}...` : v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return Array.isArray(v) ? 'an array' : typeof v;
}
