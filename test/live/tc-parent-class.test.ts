/**
 * Live: a qdisc added under a parent class that does not exist is a missing
 * class, never a missing module. Under an htb root qdisc 1:, parent "1:"
 * (minor 0, the qdisc itself) and "1:99" name no class: the kernel answers
 * ENOENT "Specified class not found", as tc prints it, and synplug must not
 * report the pfifo module as missing. Devices: sp-tcm*.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { NetlinkError } from '../../src/netlink/errors.js';
import { addQdisc, KindUnavailableError, listQdiscs } from '../../src/tc/index.js';
import { run, deleteLinks } from '../helpers/tools.js';

const DEV = 'sp-tcm0';
let conn: NetlinkConnection;

test.before(() => {
  deleteLinks(DEV);
  run('/usr/sbin/ip', 'link', 'add', DEV, 'type', 'ifb');
  run('/usr/sbin/tc', 'qdisc', 'add', 'dev', DEV, 'root', 'handle', '1:', 'htb');
  conn = NetlinkConnection.open(NETLINK_ROUTE);
});

test.after.always(() => {
  conn?.close();
  deleteLinks(DEV);
});

/** tc's own failure for the same request: its exit status and the kernel's sentence it printed. */
function tcSays(parent: string): { status: number | null; stderr: string } {
  const r = spawnSync('/usr/sbin/tc', ['qdisc', 'add', 'dev', DEV, 'parent', parent, 'handle', '20:', 'pfifo'], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

for (const [parent, classText] of [
  ['1:', null],
  ['1:99', '1:99'],
] as const) {
  test.serial(`pfifo under parent ${parent} of an htb with no such class: a missing class (as tc says), not a missing module`, async (t) => {
    const tc = tcSays(parent);
    t.not(tc.status, 0, 'tc refuses it as well');
    const e = await t.throwsAsync(addQdisc(conn, { dev: DEV, parent, handle: '20:', kind: 'pfifo' }), { instanceOf: NetlinkError });
    t.false(e instanceof KindUnavailableError, e.message);
    t.not(e.category, 'missing-module');
    t.is(e.code, 'ENOENT');
    t.notRegex(e.message, /not available in this kernel|module/);
    // the kernel's own sentence, as tc printed it ("Error: <sentence>."), leads our message when the socket got it
    const kernel = /Error: (.*?)\.?\s*$/m.exec(tc.stderr)?.[1];
    t.truthy(kernel, tc.stderr);
    if (e.extAckMessage !== undefined) t.true(e.message.startsWith(kernel!), `${e.message} / tc: ${tc.stderr}`);
    t.regex(e.message, classText === null ? /parent 1: is qdisc 1: \(kind 'htb'\) itself, not one of its classes/ : /class 1:99 does not exist/);
    t.regex(e.message, new RegExp(`dev ${DEV}`));
    // nothing was added: the device still has only the htb root, as tc lists it
    const theirs = JSON.parse(run('/usr/sbin/tc', '-j', 'qdisc', 'show', 'dev', DEV)) as Array<{ kind: string; handle: string }>;
    t.deepEqual(
      (await listQdiscs(conn, { dev: DEV })).map((q) => [q.kind, q.handle]),
      theirs.map((q) => [q.kind, q.handle]),
    );
  });
}
