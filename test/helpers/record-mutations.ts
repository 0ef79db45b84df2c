/**
 * Records synplug writes (setup.json with each mode's hold, plug.json,
 * leases.json) and fast-check arbitraries that mutate them: a field set to
 * any JSON value or an absurd one (1e308, -1, a long string...), a field
 * removed, `holds` emptied, the whole file replaced. For the property tests
 * of issue #19 (deliverable 4): no record content may produce an internal
 * error or a stack trace, or change anything.
 */
import fc from 'fast-check';
import type { InboundHoldRecord } from '../../src/guard/modes/inbound.js';

/** A local hold entry as setup writes it. */
export const LOCAL_HOLD = {
  mode: 'local',
  dev: 'lo',
  addr: '169.254.255.254',
  mark: 1,
  limit: 1048576,
  table: 'synplug',
  addedAddress: true,
  prefixlen: 32,
  createdAt: 1,
};

/** An inbound hold entry as setup writes it: sp-eth0's, port 80, flower, both families (every field of `o` overrides). */
export function inboundHoldRecord(o: Partial<InboundHoldRecord> = {}): InboundHoldRecord {
  return {
    mode: 'inbound',
    dev: 'sp-eth0',
    createdAt: 1,
    ifb: 'spifb3',
    ports: [80],
    addrs: [],
    classifier: 'flower',
    limit: 1048576,
    families: ['ip', 'ipv6'],
    addedClsact: false,
    ...o,
  };
}

/**
 * What synplug writes, by file name, one or more variants each.
 * @param netns the cookie of the namespace the records are read in: setup.json carries it (synplug writes it on every kernel that has one)
 */
export function baseRecords(now: number, inboundDev = 'sp-eth0', netns?: string): Record<string, unknown[]> {
  const inbound = {
    mode: 'inbound',
    dev: inboundDev,
    ifb: 'spifb3',
    ports: [16000],
    addrs: [],
    classifier: 'u32',
    limit: 1048576,
    families: ['ip', 'ipv6'],
    addedClsact: false,
    createdAt: 1,
  };
  const queue = {
    mode: 'queue',
    dev: 'lo',
    createdAt: 1,
    scope: 'local',
    addrs: ['169.254.255.254'],
    ports: [],
    queueNum: 4242,
    maxlen: 65536,
    table: 'synplug_queue',
    verdict: 'compat',
    addedAddress: true,
  };
  return {
    'setup.json': [
      { version: 2, holds: { local: LOCAL_HOLD } },
      { version: 2, holds: { [`inbound:${inboundDev}`]: inbound } },
      { version: 2, holds: { queue } },
      { version: 2, holds: { local: LOCAL_HOLD, [`inbound:${inboundDev}`]: inbound }, createdStateDir: true },
    ].map((r) => (netns === undefined ? r : { ...r, netns })),
    'plug.json': [
      { version: 1, state: 'buffering', owner: 'protect', pid: 1, pidStart: 1, watchdogPid: 1, dev: 'lo', since: now - 1000, deadline: now + 5000 },
      { version: 1, state: 'released', owner: 'manual', pid: 1, dev: 'lo', since: now - 1000, deadline: now - 1000, releasedAt: now - 500 },
    ],
    'leases.json': [
      {
        version: 1,
        leases: [
          { id: '0123456789abcdef', owner: 'protect', pid: 1, pidStart: 1, command: ['true'], holds: ['local'], since: now - 1000, deadline: now + 5000 },
        ],
      },
    ],
  };
}

type Path = Array<string | number>;

/** Every path to a value inside `v` (objects and arrays walked). */
export function pathsOf(v: unknown, prefix: Path = []): Path[] {
  if (typeof v !== 'object' || v === null) return [prefix];
  const out: Path[] = [prefix];
  for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...prefix, Array.isArray(v) ? Number(k) : k]));
  return out;
}

function setAt(root: unknown, path: Path, value: unknown, remove: boolean): unknown {
  if (path.length === 0) return remove ? undefined : value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let o = copy;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(o)) o.splice(Number(last), 1);
    else delete o[last];
  } else o[last] = value;
  return copy;
}

/** Values a hand-edited or planted record might hold where synplug writes something else. */
export const absurdValue = fc.oneof(
  fc.constantFrom(
    1e308,
    -1e308,
    -1,
    0,
    -0,
    1.5,
    2 ** 31,
    2 ** 53,
    2 ** 64,
    Number.MAX_SAFE_INTEGER,
    '',
    'x'.repeat(5000),
    '127.0.0.1',
    '::1',
    'filter',
    '../..',
    [],
    {},
    null,
    true,
    false,
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

/** One mutation of a record. */
export function mutation(base: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(base);
  const inner = paths.filter((p) => p.length > 0);
  return fc.oneof(
    { weight: 5, arbitrary: fc.tuple(fc.constantFrom(...paths), absurdValue).map(([p, v]) => setAt(base, p, v, false)) },
    ...(inner.length ? [{ weight: 2, arbitrary: fc.constantFrom(...inner).map((p) => setAt(base, p, undefined, true)) }] : []),
    { weight: 1, arbitrary: fc.constant({ ...(base as object), holds: {} }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** A file name and its content: a record synplug writes, mutated one to three times. */
export function mutatedRecord(now: number, inboundDev?: string, netns?: string): fc.Arbitrary<{ file: string; value: unknown }> {
  const bases = Object.entries(baseRecords(now, inboundDev, netns)).flatMap(([file, vs]) => vs.map((v) => ({ file, v })));
  return fc.constantFrom(...bases).chain(({ file, v }) =>
    fc.integer({ min: 1, max: 3 }).chain((n) => {
      let arb: fc.Arbitrary<unknown> = fc.constant(v);
      for (let i = 0; i < n; i++) arb = arb.chain((x) => (typeof x === 'object' && x !== null ? mutation(x) : fc.constant(x)));
      return arb.map((value) => ({ file, value }));
    }),
  );
}
