/**
 * Kernel tests (in the VM, Debian's 6.1 / 6.12 kernels with every module):
 * nft's native `queue` expression. The probe finds it (loading nft_queue on
 * demand: the rolled-back batch's EAGAIN is replayed by the kernel) and
 * changes nothing; a rule whose verdict is queueRuleExpressions('native', N),
 * sent through our own encoder, lists in nft as nft lists its own; an
 * NfqueueHolder holds a local SYN through it and releases it. Table
 * synplug_kq, port 39281 on 127.0.0.1.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import * as N from '../../src/iptables/index.js';
import type { Expr } from '../../src/iptables/expr/index.js';
import { NfqueueHolder } from '../../src/netlink/nfqueue.js';
import { lockLo, waitFor } from '../helpers/guard-vm.js';

const NFT = '/usr/sbin/nft';
const nft = (...args: string[]): string => execFileSync(NFT, args, { encoding: 'utf8' });
const TABLE = 'synplug_kq';
const QUEUE = 28;
const PORT = 39281;

const conn = N.openNftables({ timeoutMs: 20_000 });
let unlock: (() => void) | undefined;
test.before(async () => {
  unlock = await lockLo();
});
test.after.always(() => {
  try {
    execFileSync(NFT, ['delete', 'table', 'inet', TABLE], { stdio: 'ignore' });
  } catch {
    /* gone */
  }
  conn.close();
  unlock?.();
});

/** `tcp dport PORT tcp flags & (syn | ack) == syn` as nft 1.0.6 encodes it in an inet table. */
const synToPort: Expr[] = [
  { name: 'meta', key: 'l4proto', dreg: 1 },
  { name: 'cmp', sreg: 1, op: 'eq', data: '06' },
  { name: 'payload', base: 'transport', offset: 2, len: 2, dreg: 1 },
  { name: 'cmp', sreg: 1, op: 'eq', data: PORT.toString(16).padStart(4, '0') },
  { name: 'payload', base: 'transport', offset: 13, len: 1, dreg: 1 },
  { name: 'bitwise', sreg: 1, dreg: 1, len: 1, op: 'mask_xor', mask: '12', xor: '00' },
  { name: 'cmp', sreg: 1, op: 'eq', data: '02' },
];

test.serial('the probe finds the native queue expression and changes nothing', async (t) => {
  t.log(`kernel ${os.release()}; nft_queue loaded before the probe: ${/^nft_queue /m.test(execFileSync('cat', ['/proc/modules'], { encoding: 'utf8' }))}`);
  const before = nft('list', 'ruleset');
  const gen = await N.getGenId(conn);
  t.is(await N.probeQueueExpression(conn), 'native');
  t.is(nft('list', 'ruleset'), before);
  t.is(await N.getGenId(conn), gen, 'the rolled-back batch did not move the generation');
  t.is(await N.compatRevision(conn, 'NFQUEUE', 3), 3, 'the xt target is there too');
});

test.serial(
  'a native queue rule through our encoder: nft lists it as we print it, and an NfqueueHolder holds and releases a local SYN through it',
  async (t) => {
    await new N.NftBatch()
      .addTable({ family: 'inet', name: TABLE })
      .addChain({ family: 'inet', table: TABLE, name: 'out', type: 'filter', hook: 'output', prio: 'raw' })
      .addRule({ family: 'inet', table: TABLE, chain: 'out', expr: [...synToPort, ...N.queueRuleExpressions('native', QUEUE)] })
      .commit(conn);
    const theirs = nft('list', 'table', 'inet', TABLE);
    t.true(theirs.includes(`\t\ttcp dport ${PORT} tcp flags syn / syn,ack queue flags bypass to ${QUEUE}\n`), theirs);
    const ours = N.formatRulesetText({
      tables: (await N.listTables(conn, { family: 'inet' })).filter((x) => x.name === TABLE),
      chains: await N.listChains(conn, { family: 'inet', table: TABLE }),
      sets: [],
      rules: await N.listRules(conn, { family: 'inet', table: TABLE }),
    });
    t.is(ours, theirs);

    const server = net.createServer((c) => c.destroy());
    await new Promise<void>((res) => server.listen(PORT, '127.0.0.1', () => res()));
    const h = await NfqueueHolder.bind(QUEUE);
    try {
      let state = 'pending';
      const c = net.connect({ host: '127.0.0.1', port: PORT });
      c.on('connect', () => {
        state = 'connected';
        c.destroy();
      });
      c.on('error', (e: NodeJS.ErrnoException) => {
        state = e.code ?? 'error';
      });
      await waitFor(() => h.held === 1, 'the SYN held');
      t.is(state, 'pending');
      t.is(await h.release(), 1);
      await waitFor(() => state !== 'pending', 'the released connect');
      t.is(state, 'connected');
    } finally {
      await h.close();
      server.close();
      await new N.NftBatch().deleteTable({ family: 'inet', name: TABLE }).commit(conn);
    }
  },
);
