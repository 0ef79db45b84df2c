/**
 * Live: kernel refusals become errors that name what is wrong. For each
 * case, `tc` fails on the same operation too (the oracle that the situation
 * is an error on this kernel), and our NetlinkError carries the errno and a
 * specific sentence. Devices: sp-tce*.
 *
 * This kernel lacks sch_prio, sch_plug and cls_fw (their success paths run
 * in the VM, test/kernel/tc-*.test.ts).
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { NetlinkError, UsageError, type ErrorCategory } from '../../src/netlink/errors.js';
import {
  addQdisc,
  changeQdisc,
  deleteQdisc,
  addClass,
  deleteClass,
  addFilter,
  deleteFilter,
  listQdiscs,
  listClasses,
  listFilters,
  plugBuffer,
  plugReleaseIndefinite,
  plugSetLimit,
  replaceQdisc,
  KindUnavailableError,
} from '../../src/tc/index.js';

const DEV = 'sp-tce0';
const DEV2 = 'sp-tce1';
let conn: NetlinkConnection;
let ifindex2 = 0;

function run(cmd: string, ...args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8' });
}
/** tc's exit status and stderr for a command that should fail. */
function tcFails(...args: string[]): string {
  const r = spawnSync('tc', args, { encoding: 'utf8' });
  if (r.status === 0) throw new Error(`tc ${args.join(' ')} unexpectedly succeeded`);
  return r.stderr.trim();
}
function quietly(cmd: string, ...args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    /* gone */
  }
}

/**
 * The operation is refused with `code`, and synplug's sentence is `message`.
 * When the kernel sent its own text (extended ack), the error's message is
 * the kernel's sentence, then ours; `explanation` holds ours alone.
 */
async function refused(t: ExecutionContext, p: Promise<unknown>, code: string, message: string, category: ErrorCategory = 'kernel'): Promise<NetlinkError> {
  const e = await t.throwsAsync(p, { instanceOf: NetlinkError });
  t.is(e!.code === 'ENOTSUP' ? 'EOPNOTSUPP' : e!.code, code);
  t.is(e!.explanation ?? e!.message, message);
  const kernel = e!.extAckMessage?.trim();
  if (kernel) {
    // the kernel's sentence, then ours (how the two are joined is netlink/errors.ts's to test)
    t.true(e!.message.startsWith(kernel), e!.message);
    t.true(e!.message.endsWith(message.slice(1)), e!.message);
  } else {
    t.is(e!.message, message);
  }
  t.is(e!.category, category);
  return e as NetlinkError;
}

test.before(() => {
  for (const d of [DEV, DEV2]) quietly('ip', 'link', 'del', d);
  for (const d of [DEV, DEV2]) {
    run('ip', 'link', 'add', d, 'type', 'ifb');
    run('ip', 'link', 'set', d, 'up');
  }
  ifindex2 = Number(/^(\d+):/.exec(run('ip', '-o', 'link', 'show', 'dev', DEV2))![1]);
  // An htb tree like the captures' prio one: 1: with classes 1:1..1:3, pfifo 30: on 1:3.
  run('tc', 'qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'htb');
  for (const c of ['1', '2', '3']) run('tc', 'class', 'add', 'dev', DEV, 'parent', '1:', 'classid', `1:${c}`, 'htb', 'rate', '1mbit');
  run('tc', 'qdisc', 'add', 'dev', DEV, 'parent', '1:3', 'handle', '30:', 'pfifo');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
});

test.after.always(() => {
  conn?.close();
  for (const d of [DEV, DEV2]) quietly('ip', 'link', 'del', d);
});

test('a qdisc kind the kernel lacks: prio — the message names the kind and its module', async (t) => {
  t.regex(tcFails('qdisc', 'add', 'dev', DEV2, 'root', 'handle', '1:', 'prio', 'bands', '4'), /Specified qdisc kind is unknown/);
  const e = await refused(
    t,
    addQdisc(conn, { dev: DEV2, parent: 'root', handle: '1:', kind: 'prio', options: { bands: 4 } }),
    'ENOENT',
    "qdisc kind 'prio' is not available in this kernel (module sch_prio)",
    'missing-module',
  );
  t.true(e instanceof KindUnavailableError);
  t.like(e, { module: 'sch_prio', kind: 'prio', object: 'qdisc' });
});

test('a kind neither synplug nor the kernel knows: unknown to the kernel, no module named', async (t) => {
  t.regex(tcFails('qdisc', 'add', 'dev', DEV2, 'root', 'handle', '1:', 'nosuch'), /Specified qdisc kind is unknown|Unknown qdisc/);
  const e = await refused(
    t,
    addQdisc(conn, { dev: DEV2, parent: 'root', handle: '1:', kind: 'nosuch' }),
    'ENOENT',
    "qdisc kind 'nosuch' is unknown to this kernel (ENOENT): check the name; if it is right, the module that provides it is not loaded and cannot be loaded",
  );
  t.false(e instanceof KindUnavailableError);
  t.notRegex(e.message, /sch_nosuch/);
  const f = await refused(
    t,
    addFilter(conn, { dev: DEV, parent: '1:', protocol: 'ip', pref: 3, kind: 'nosuchcls' }),
    'ENOENT',
    "filter kind 'nosuchcls' is unknown to this kernel (ENOENT): check the name; if it is right, the module that provides it is not loaded and cannot be loaded",
  );
  t.notRegex(f.message, /cls_nosuchcls/);
});

test('a qdisc kind the kernel lacks: plug, added under a class as the technique does', async (t) => {
  t.regex(tcFails('qdisc', 'add', 'dev', DEV, 'parent', '1:2', 'handle', '40:', 'plug', 'limit', '1048576'), /Specified qdisc kind is unknown/);
  const e = await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: '1:2', handle: '40:', kind: 'plug', options: { limit: 1048576 } }),
    'ENOENT',
    "qdisc kind 'plug' is not available in this kernel (module sch_plug)",
    'missing-module',
  );
  t.like(e, { module: 'sch_plug', kind: 'plug', object: 'qdisc' });
  await refused(
    t,
    replaceQdisc(conn, { dev: DEV2, parent: 'root', handle: '4:', kind: 'plug' }),
    'ENOENT',
    "qdisc kind 'plug' is not available in this kernel (module sch_plug)",
    'missing-module',
  );
});

test('a classifier the kernel lacks: fw — the message names the kind and cls_fw', async (t) => {
  t.regex(
    tcFails('filter', 'add', 'dev', DEV, 'parent', '1:', 'protocol', 'ip', 'prio', '1', 'handle', '1', 'fw', 'classid', '1:2'),
    /classifier not found|Error/i,
  );
  const e = await refused(
    t,
    addFilter(conn, { dev: DEV, parent: '1:', protocol: 'ip', pref: 1, kind: 'fw', handle: 1, options: { classid: '1:2' } }),
    'ENOENT',
    "filter kind 'fw' is not available in this kernel (module cls_fw)",
    'missing-module',
  );
  t.like(e, { module: 'cls_fw', kind: 'fw', object: 'filter' });
});

test('a missing device: by name (tc: Cannot find device) and by index', async (t) => {
  t.regex(tcFails('qdisc', 'add', 'dev', 'sp-tce-none', 'root', 'handle', '5:', 'pfifo'), /Cannot find device "sp-tce-none"/);
  // ENODEV is the caller's mistake: category usage (src/netlink/errors.ts categoryOfErrno)
  await refused(t, addQdisc(conn, { dev: 'sp-tce-none', parent: 'root', handle: '5:', kind: 'pfifo' }), 'ENODEV', "device 'sp-tce-none' not found", 'usage');
  await refused(t, listQdiscs(conn, { dev: 'sp-tce-none' }), 'ENODEV', "device 'sp-tce-none' not found", 'usage');
  await refused(t, listClasses(conn, { dev: 'sp-tce-none' }), 'ENODEV', "device 'sp-tce-none' not found", 'usage');
  await refused(t, addQdisc(conn, { ifindex: 999999, parent: 'root', handle: '5:', kind: 'pfifo' }), 'ENODEV', 'device with index 999999 not found', 'usage');
  // A missing index is ENODEV for the listings too (the kernel answers their dumps with nothing).
  t.regex(tcFails('qdisc', 'show', 'dev', 'sp-tce-none'), /Cannot find device/);
  await refused(t, listQdiscs(conn, { ifindex: 999999 }), 'ENODEV', 'device with index 999999 not found', 'usage');
  await refused(t, listClasses(conn, { ifindex: 999999 }), 'ENODEV', 'device with index 999999 not found', 'usage');
  await refused(t, listFilters(conn, { ifindex: 999999 }), 'ENODEV', 'device with index 999999 not found', 'usage');
});

test('an existing handle: add again (tc: Exclusivity flag on); a busy root', async (t) => {
  t.regex(tcFails('qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'htb'), /Exclusivity flag on, cannot modify/);
  await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: 'root', handle: '1:', kind: 'htb' }),
    'EEXIST',
    `a qdisc with handle 1: already exists on dev ${DEV} (kind 'htb'); use replace or change`,
  );
  await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: 'root', handle: '2:', kind: 'pfifo' }),
    'EEXIST',
    `the root on dev ${DEV} already has a qdisc (handle 1:, kind 'htb'); use replace`,
  );
  await refused(
    t,
    addClass(conn, { dev: DEV, parent: '1:', classid: '1:1', kind: 'htb', options: { rate: '1mbit' } }),
    'EEXIST',
    `class 1:1 already exists on dev ${DEV}; use change or replace`,
  );
});

test('a missing handle: delete 99: under 1:3 (tc: Invalid handle), a missing class, a missing filter', async (t) => {
  t.regex(tcFails('qdisc', 'del', 'dev', DEV, 'parent', '1:3', 'handle', '99:'), /Invalid handle/);
  await refused(t, deleteQdisc(conn, { dev: DEV, parent: '1:3', handle: '99:' }), 'EINVAL', `no qdisc with handle 99: under parent 1:3 on dev ${DEV}`);
  await refused(t, deleteQdisc(conn, { dev: DEV, parent: '1:9' }), 'ENOENT', `no qdisc under parent 1:9 on dev ${DEV} to delete`);
  await refused(
    t,
    changeQdisc(conn, { dev: DEV2, parent: 'root', handle: '8:', kind: 'pfifo' }),
    'ENOENT',
    `no qdisc with handle 8: at the root on dev ${DEV2} to change; use add or replace`,
  );
  await refused(t, deleteClass(conn, { dev: DEV, classid: '1:77' }), 'ENOENT', `no class 1:77 on dev ${DEV}`);
  await refused(
    t,
    deleteFilter(conn, { dev: DEV, parent: '1:', protocol: 'ip', pref: 9, kind: 'u32' }),
    'ENOENT',
    `no filter 'u32' pref 9 under 1: on dev ${DEV}`,
  );
  await refused(
    t,
    deleteQdisc(conn, { ifindex: ifindex2, parent: 'root' }),
    'ENOENT',
    `cannot delete qdisc at the root on device index ${ifindex2} (ENOENT): it is the default qdisc, which cannot be deleted`,
  );
});

test('a qdisc under a class that does not exist, or under a classless qdisc', async (t) => {
  await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: '1:8', handle: '80:', kind: 'pfifo' }),
    'ENOENT',
    `cannot add qdisc with handle 80: under parent 1:8 on dev ${DEV}: class 1:8 does not exist`,
  );
  await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: '7:1', handle: '80:', kind: 'pfifo' }),
    'ENOENT',
    `cannot add qdisc with handle 80: under parent 7:1 on dev ${DEV}: parent 7:1 does not exist (no qdisc 7:)`,
  );
  await refused(
    t,
    addQdisc(conn, { dev: DEV, parent: '30:1', handle: '80:', kind: 'pfifo' }),
    'EOPNOTSUPP',
    `cannot add qdisc 'pfifo' with handle 80: under parent 30:1 on dev ${DEV}: qdisc 30: is not classful, so it has no class 30:1 to hold a qdisc (EOPNOTSUPP)`,
  );
});

test('plug verbs on a plug that is not there: the message says so; a wrong kind at that handle', async (t) => {
  await refused(
    t,
    plugBuffer(conn, { dev: DEV, parent: '1:3', handle: '40:' }),
    'EEXIST',
    `no plug qdisc with handle 40: under parent 1:3 on dev ${DEV}: that place holds qdisc 30: (kind 'pfifo')`,
  );
  await refused(
    t,
    plugReleaseIndefinite(conn, { dev: DEV, parent: '1:3', handle: '30:' }),
    'EINVAL',
    `the qdisc with handle 30: under parent 1:3 on dev ${DEV} is a 'pfifo', not a 'plug'`,
  );
  await refused(
    t,
    plugBuffer(conn, { dev: DEV, parent: '1:1', handle: '40:' }),
    'ENOENT',
    `no qdisc with handle 40: under parent 1:1 on dev ${DEV} to change (create the plug qdisc first)`,
  );
  await t.throwsAsync(plugSetLimit(conn, { dev: DEV, parent: '1:3', handle: '40:', limit: 0 }), { instanceOf: UsageError, message: /drop every packet/ });
});

test('bad text never reaches the kernel: UsageError (exit code 2)', async (t) => {
  await t.throwsAsync(addQdisc(conn, { dev: DEV, parent: '1:x', handle: '5:', kind: 'pfifo' }), {
    instanceOf: UsageError,
    message: /invalid qdisc parent "1:x"/,
  });
  await t.throwsAsync(addQdisc(conn, { dev: DEV, parent: 'root', handle: '5:1', kind: 'pfifo' }), { instanceOf: UsageError, message: /no minor number/ });
  await t.throwsAsync(addQdisc(conn, { dev: 'bad/name', parent: 'root', kind: 'pfifo' }), { instanceOf: UsageError });
  await t.throwsAsync(addClass(conn, { dev: DEV, parent: '1:', classid: '1:5', kind: 'htb', options: ['rate', 'fast'] }), {
    instanceOf: UsageError,
    message: /invalid htb rate "fast"/,
  });
});
