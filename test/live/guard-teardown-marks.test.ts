/**
 * Live (this kernel, through the built CLI, dist/bundle/synplug.cjs): teardown
 * removes only what carries synplug's mark, and a record naming what setup
 * refuses is refused (issue #19, deliverable 3; defect 3 as it was found).
 *
 * - the attack: a record naming `table ip filter` and an address
 *   with `addedAddress: true` made teardown delete both. Now: exit 6 naming
 *   the file and the table, nothing changed; the hidden `--table` flag is gone;
 * - a record naming a loopback address (which setup refuses): exit 6, the
 *   address stays;
 * - a record naming synplug's table name and an address, when neither
 *   carries synplug's mark (made by hand): both kept, and teardown says why;
 * - the same when both carry the mark (the table comment, written by nft;
 *   the address protocol 83, written by synplug and read back by an
 *   independent rtnetlink dump): both removed.
 *
 * Runs in a namespace of this file's own (sp-tdm-PID), with a veth pair.
 * The state is judged by the reference tools: `nft list ruleset`, `ip -j addr`,
 * and test/helpers/addr-proto.py for IFA_PROTO (iproute2 6.1 does not print it).
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inboundNetns, IP } from '../helpers/inbound-netns.js';
import { cookieOf } from '../helpers/netns-cookie.js';
import { NetlinkConnection } from '../../src/netlink/connection.js';
import { NETLINK_ROUTE } from '../../src/netlink/message.js';
import { addAddress } from '../../src/netlink/route/addr.js';
import { ADDRESS_PROTO, TABLE_COMMENT } from '../../src/guard/teardown-marks.js';

const NFT = '/usr/sbin/nft';
const DEV = 'sp-tdm0';
const N = inboundNetns('sp-tdm', DEV, 'sp-tdm1');
const ORACLE = fileURLToPath(new URL('../helpers/addr-proto.py', import.meta.url));

const nft = (...args: string[]) => execFileSync(IP, ['netns', 'exec', N.ns, NFT, ...args], { encoding: 'utf8' });
/** The addresses of the namespace with their IFA_PROTO, from the independent dump. */
const addrs = () => JSON.parse(execFileSync(IP, ['netns', 'exec', N.ns, 'python3', ORACLE], { encoding: 'utf8' })) as Array<{ local?: string; proto?: number }>;
/** Everything teardown could touch, as the reference tools see it. */
const snapshot = () => ({ ruleset: nft('list', 'ruleset'), addrs: addrs() });

function stateDirWith(record: object): string {
  const base = mkdtempSync(join(tmpdir(), 'synplug-tdm-'));
  const sd = join(base, 'state');
  mkdirSync(sd, { mode: 0o700 });
  writeFileSync(join(sd, 'setup.json'), JSON.stringify({ ...record, netns: cookieOf(N.ns) }));
  return sd;
}

function localRecord(fields: Record<string, unknown>) {
  return {
    version: 2,
    holds: {
      local: {
        mode: 'local',
        dev: DEV,
        addr: '169.254.31.1',
        mark: 1,
        limit: 65536,
        table: 'synplug',
        addedAddress: true,
        prefixlen: 32,
        createdAt: 1,
        ...fields,
      },
    },
  };
}

test.before(() => {
  N.create();
  N.sh(IP, 'link', 'set', DEV, 'up');
});
test.after.always(() => N.destroy());

test.serial(
  "the issue's attack: a record naming table ip filter and an address it 'added': exit 6 naming both the file and the table; nothing removed",
  async (t) => {
    nft('add', 'table', 'ip', 'filter');
    nft('add', 'chain', 'ip', 'filter', 'input', '{ type filter hook input priority 0; policy accept; }');
    N.sh(IP, 'addr', 'add', '169.254.31.1/32', 'dev', DEV);
    const sd = stateDirWith(localRecord({ table: 'filter' }));
    try {
      const before = snapshot();
      for (const cmd of [['teardown'], ['teardown', '--local'], ['check'], ['status'], ['release']]) {
        const r = await N.synplug(sd, ...cmd);
        t.is(r.code, 6, `${cmd.join(' ')}: ${r.stderr}`);
        t.regex(r.stderr, /setup\.json is not a setup record synplug wrote/);
        t.regex(r.stderr, /hold 'local' names what setup refuses: bad table name 'filter'/);
        t.regex(r.stderr, /nothing was changed/);
        t.notRegex(r.stderr, /\n\s+at /, 'no stack trace');
      }
      t.deepEqual(snapshot(), before, 'table ip filter and the address are still there, unchanged');
      t.regex(before.ruleset, /table ip filter/);
      // the hidden flag is gone: a usage error, nothing removed
      const flag = await N.synplug(sd, 'teardown', '--table', 'filter');
      t.is(flag.code, 2);
      t.regex(flag.stderr, /unknown option '--table'/);
      t.deepEqual(snapshot(), before);
    } finally {
      N.quiet(IP, 'addr', 'del', '169.254.31.1/32', 'dev', DEV);
      nft('flush', 'ruleset');
      rmSync(join(sd, '..'), { recursive: true, force: true });
    }
  },
);

test.serial('a record naming a loopback address (setup refuses it): exit 6 saying so; the address stays', async (t) => {
  N.sh(IP, 'addr', 'add', '127.0.0.5/32', 'dev', 'lo');
  const sd = stateDirWith(localRecord({ dev: 'lo', addr: '127.0.0.5' }));
  try {
    const before = snapshot();
    const r = await N.synplug(sd, 'teardown');
    t.is(r.code, 6, r.stderr);
    t.regex(r.stderr, /hold 'local' names what setup refuses: bad address '127\.0\.0\.5': a loopback address/);
    t.deepEqual(snapshot(), before);
    t.true(addrs().some((a) => a.local === '127.0.0.5'));
  } finally {
    N.quiet(IP, 'addr', 'del', '127.0.0.5/32', 'dev', 'lo');
    rmSync(join(sd, '..'), { recursive: true, force: true });
  }
});

test.serial("a record naming synplug's table and an address, neither carrying synplug's mark: teardown keeps both and says why", async (t) => {
  nft('add', 'table', 'ip', 'synplug'); // made by hand: no comment
  nft('add', 'chain', 'ip', 'synplug', 'output', '{ type route hook output priority mangle; policy accept; }');
  N.sh(IP, 'addr', 'add', '169.254.31.1/32', 'dev', DEV); // no protocol
  const sd = stateDirWith(localRecord({}));
  try {
    const before = snapshot();
    const r = await N.synplug(sd, 'teardown', '--json');
    t.is(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout) as { removed: string[]; kept: string[] };
    t.false(
      o.removed.some((x) => /table|address/.test(x)),
      JSON.stringify(o.removed),
    );
    t.true(o.kept.some((x) => /nftables table ip synplug: it does not carry synplug's comment/.test(x)));
    t.true(o.kept.some((x) => /address 169\.254\.31\.1\/32 on sp-tdm0: .* does not carry synplug's mark \(address protocol 83\)/.test(x)));
    const after = snapshot();
    t.is(after.ruleset, before.ruleset, 'the table is still there, unchanged');
    t.true(after.addrs.some((a) => a.local === '169.254.31.1'));
  } finally {
    N.quiet(IP, 'addr', 'del', '169.254.31.1/32', 'dev', DEV);
    nft('flush', 'ruleset');
    rmSync(join(sd, '..'), { recursive: true, force: true });
  }
});

test.serial("with synplug's marks (the table comment nft writes; address protocol 83, read back independently): teardown removes both", async (t) => {
  nft('add', 'table', 'ip', 'synplug', `{ comment "${TABLE_COMMENT}"; }`);
  t.regex(nft('list', 'table', 'ip', 'synplug'), new RegExp(`comment "${TABLE_COMMENT}"`));
  const conn = NetlinkConnection.open(NETLINK_ROUTE, { netns: N.ns });
  try {
    await addAddress(conn, { dev: DEV, address: '169.254.31.1', prefixlen: 32, protocol: ADDRESS_PROTO });
  } finally {
    conn.close();
  }
  t.like(
    addrs().find((a) => a.local === '169.254.31.1'),
    { proto: 83 },
    'the kernel keeps the address protocol synplug set',
  );
  const sd = stateDirWith(localRecord({}));
  try {
    const r = await N.synplug(sd, 'teardown', '--json');
    t.is(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout) as { removed: string[]; kept: string[] };
    t.true(o.removed.includes('nftables table ip synplug'), JSON.stringify(o));
    t.true(o.removed.includes(`address 169.254.31.1/32 on ${DEV}`), JSON.stringify(o));
    t.notRegex(nft('list', 'ruleset'), /table ip synplug/);
    t.false(addrs().some((a) => a.local === '169.254.31.1'));
  } finally {
    N.quiet(IP, 'addr', 'del', '169.254.31.1/32', 'dev', DEV);
    nft('flush', 'ruleset');
    rmSync(join(sd, '..'), { recursive: true, force: true });
  }
});
