/**
 * Kernel tests (in the VM: sch_plug, sch_prio, cls_fw, ifb, act_mirred):
 * two state directories in one namespace, on the plug holds (issue #19, a
 * security review's SEVERE finding). The plug holds' kernel objects carried
 * no state directory's mark, so commands through ANOTHER state directory
 * acted on a live hold that was not theirs:
 *
 * - `synplug release --state-dir B` ended a live local or inbound plug hold
 *   of directory A (deleting its marking element);
 * - `synplug teardown --state-dir B`, with a setup.json copied from A,
 *   removed A's whole hold;
 * - a plug.json and leases.json copied from A (buffering, their leases
 *   holding nothing in B) made B's `status` release A's plug as stale.
 *
 * Now the local plug hold's table comment and the inbound hold's IFB alias
 * carry A's mark (teardown-marks.ts): through B, release is exit 7 with
 * nothing sent, check is 12 (naming A's mark), plug 8, status and teardown
 * change nothing of A's hold (teardown says whose it is), and A's hold
 * still holds: its held client connects only at A's own release.
 *
 * Oracles: `tc -j`, `nft -j`, `ip -j` (test/helpers/guard-vm.ts); clients
 * that connect (a probe on lo; python clients in another namespace joined
 * by a veth pair for the inbound hold). Every wait is bounded.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { inNs, otherNamespace, quietly, runClient, sh, IP } from '../helpers/tc-inbound.js';
import {
  ADDR,
  STATE_DIR,
  TEST_TIMEOUT,
  activeElements,
  assertArmed,
  assertLoClean,
  cli,
  probe,
  run,
  setupWithProxy,
  sleep,
  useGuardVm,
  within,
} from '../helpers/guard-vm.js';

useGuardVm(test);

/** Directory B: another state directory, in the same namespace. */
const B = '/run/synplug-two-dirs-b';
/** The inbound hold's directory A (the local hold's A is the default, /run/synplug). */
const A_IN = '/run/synplug-two-dirs-a';

const SRV = 'sp-td0';
const PEER = 'sp-td1';
const PORT = 16081;
const V4 = { srv: '169.254.81.1', cli: '169.254.81.2' };

/**
 * One connection from the client namespace that sends a byte and reads it
 * back, waiting up to 250 s to connect (a held SYN, retransmitted and held
 * again, while the test runs synplug through B). Resolves with 'ok'.
 */
function heldClient(ns: ChildProcess): Promise<string> {
  const py = `import socket\ns = socket.create_connection(('${V4.srv}', ${PORT}), timeout=250)\ns.sendall(b'x')\nassert s.recv(1) == b'x'\nprint('ok')`;
  return new Promise((resolve, reject) =>
    execFile('nsenter', ['-t', String(ns.pid), '-n', 'python3', '-c', py], { encoding: 'utf8', timeout: 280_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    ),
  );
}

test.afterEach.always(async () => {
  await cli(['release', '--state-dir', A_IN]).catch(() => undefined);
  await cli(['teardown', '--state-dir', A_IN]).catch(() => undefined);
  for (const d of [B, A_IN]) rmSync(d, { recursive: true, force: true });
});

async function synplug(t: ExecutionContext, args: string[], code: number): Promise<{ stdout: string; stderr: string }> {
  const r = await cli(args);
  t.is(r.code, code, `synplug ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r;
}

/** B made as setup makes a state directory (0700), holding copies of these files of A's. */
function copyInto(from: string, files: string[]): void {
  mkdirSync(B, { mode: 0o700, recursive: true });
  for (const f of files) if (existsSync(join(from, f))) copyFileSync(join(from, f), join(B, f));
}

/** The comment of table ip synplug as `nft list table` prints it (nft 1.0.6's JSON leaves table comments out). */
async function tableComment(): Promise<string | undefined> {
  const r = await run('nft', ['list', 'table', 'ip', 'synplug']);
  return r.code === 0 ? /^\tcomment "(.*)"$/m.exec(r.stdout)?.[1] : undefined;
}

test.serial(
  'the local plug hold of A, plugged: release, check, plug, status and teardown through B (no record, then copies of A records) change nothing; A still holds until its own release',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    const proxy = await setupWithProxy(t);
    const comment = await tableComment();
    const markA = /state ([0-9a-f]{16})$/.exec(comment ?? '')?.[1] ?? '(none)';
    await synplug(t, ['plug', '--max-hold', '120s'], 0);
    const held = probe(ADDR, proxy.port, ADDR);
    await sleep(500);
    t.is(held.connectedAt, undefined, 'held while A plugs');

    const stillHolding = async (when: string) => {
      await assertArmed(t, when);
      t.deepEqual(await activeElements(), [ADDR], `${when}: marking still on (the set element of A's hold)`);
      t.is(await tableComment(), comment, `${when}: A's table, as A made it`);
      await sleep(300);
      t.is(held.connectedAt, undefined, `${when}: the held client is still held`);
    };

    // B without any record (the directory does not even exist)
    const rel = await synplug(t, ['release', '--state-dir', B], 7);
    t.regex(
      rel.stderr,
      new RegExp(
        `the local hold on lo \\(the table's comment names state directory mark ${markA}; this directory's is none: it does not exist yet\\): another state directory's hold.*Use that directory's --state-dir for it.*Nothing was released`,
      ),
    );
    await stillHolding('after release through B (no record)');
    const down = JSON.parse((await synplug(t, ['teardown', '--json', '--state-dir', B], 0)).stdout) as { removed: string[] };
    t.deepEqual(
      down.removed.filter((w) => !w.startsWith('nftables table inet synplug_report')),
      [],
      'nothing of the hold removed',
    );
    await stillHolding('after teardown through B (no record)');

    // B holding copies of A's setup.json, plug.json and leases.json (its leases hold nothing in B)
    copyInto(STATE_DIR, ['setup.json', 'plug.json', 'leases.json']);
    const check = await synplug(t, ['check', '--json', '--state-dir', B], 12);
    const nft = (JSON.parse(check.stdout) as { pieces: Array<{ piece: string; status: string; detail?: string }> }).pieces.find((p) =>
      p.piece.startsWith('nftables table ip synplug'),
    );
    t.like(nft, { status: 'different' });
    t.regex(nft?.detail ?? '', new RegExp(`another state directory's local hold .*mark ${markA}`));
    await stillHolding('after check through B (copied records)');
    await synplug(t, ['status', '--state-dir', B], 0);
    await stillHolding('after status through B (copied records: no stale-plug recovery of A)');
    await synplug(t, ['plug', '--max-hold', '5s', '--state-dir', B], 8);
    await synplug(t, ['release', '--state-dir', B], 7);
    await stillHolding('after plug and release through B (copied records)');
    const downB = await synplug(t, ['teardown', '--json', '--state-dir', B], 0);
    const words = JSON.parse(downB.stdout) as { removed: string[]; kept: string[] };
    t.deepEqual(
      words.removed.filter((w) => !w.startsWith('nftables table inet synplug_report')),
      [],
      'nothing of the hold removed',
    );
    t.true(
      words.kept.some((w) => w.includes("another state directory's") && w.includes(markA)),
      JSON.stringify(words.kept),
    );
    await stillHolding('after teardown through B (copied setup.json)');

    // A's own release ends the hold: the held client connects; A's teardown removes everything
    await synplug(t, ['release'], 0);
    t.is(await within(held.data, 'the held connection once A released'), 'proxy');
    await synplug(t, ['teardown'], 0);
    await assertLoClean(t, "after A's teardown");
    // last, so that on the code of before (no mark) the assertions above show what it did
    t.regex(comment ?? '', /^synplug: made by synplug setup, removed by synplug teardown; state [0-9a-f]{16}$/, 'the table named its state directory');
  },
);

test.serial(
  'the local plug hold: setup through B refuses A table (exit 7, nothing changed); a table of an earlier synplug is different until setup marks it anew',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    await synplug(t, ['setup'], 0);
    const comment = await tableComment();
    mkdirSync(B, { mode: 0o700 });
    const r = await synplug(t, ['setup', '--state-dir', B], 7);
    t.regex(r.stderr, /another state directory's setup.*Nothing was changed/s);
    t.is(await tableComment(), comment, "A's table unchanged");
    // an earlier synplug's table (the plain comment): recreated as the test's stand-in of an upgrade
    await run('sh', [
      '-c',
      'nft delete table ip synplug && nft add table ip synplug \'{ comment "synplug: made by synplug setup, removed by synplug teardown"; }\'',
    ]);
    const check = await synplug(t, ['check', '--json'], 12);
    t.regex(check.stdout, /made by an earlier synplug, without its state directory's mark/);
    await synplug(t, ['setup'], 0);
    t.is(await tableComment(), comment, 'setup marked it anew with the same directory');
    await synplug(t, ['check'], 0);
    await synplug(t, ['teardown'], 0);
    await assertLoClean(t, 'after teardown');
  },
);

let other: ChildProcess | undefined;
let server: Server | undefined;

test.serial(
  'the inbound plug hold of A, plugged: release and teardown through B (no record, then a copied setup.json) keep it; A still holds until its own release',
  async (t) => {
    t.timeout(TEST_TIMEOUT);
    quietly(IP, 'link', 'del', SRV);
    other = await otherNamespace();
    t.teardown(() => {
      quietly(IP, 'link', 'del', SRV);
      other?.kill('SIGKILL');
      server?.close();
    });
    sh(IP, 'link', 'add', SRV, 'type', 'veth', 'peer', 'name', PEER, 'netns', String(other.pid));
    sh(IP, 'addr', 'add', `${V4.srv}/24`, 'dev', SRV);
    sh(IP, 'link', 'set', SRV, 'up');
    inNs(other, IP, 'link', 'set', 'lo', 'up');
    inNs(other, IP, 'addr', 'add', `${V4.cli}/24`, 'dev', PEER);
    inNs(other, IP, 'link', 'set', PEER, 'up');
    const srv = createServer((s) => s.pipe(s));
    server = srv;
    await new Promise<void>((r) => srv.listen({ port: PORT, host: V4.srv }, () => r()));
    await within(runClient(other, '4', V4.srv, PORT, 1), 'a first connection');

    const setup = JSON.parse(
      (await synplug(t, ['setup', '--inbound', SRV, '--port', String(PORT), '--addr', V4.srv, '--json', '--state-dir', A_IN], 0)).stdout,
    ) as {
      inbound: { ifb: string };
    };
    const ifb = setup.inbound.ifb;
    const alias = async () =>
      (JSON.parse((await run('ip', ['-j', '-d', 'link', 'show', 'dev', ifb])).stdout || '[{}]') as Array<{ ifalias?: string }>)[0]?.ifalias;
    const aliasA = await alias();
    const markA = /state ([0-9a-f]{16})$/.exec(aliasA ?? '')?.[1] ?? '(none)';
    await synplug(t, ['plug', '--max-hold', '120s', '--state-dir', A_IN], 0);
    let settled = false;
    const held = heldClient(other).finally(() => {
      settled = true;
    });
    held.catch(() => {});
    const ifbRoot = async () =>
      (JSON.parse((await run('tc', ['-s', '-j', 'qdisc', 'show', 'dev', ifb, 'root'])).stdout || '[]') as Array<{ kind: string; qlen: number }>)[0];
    const until = Date.now() + 30_000;
    while ((await ifbRoot())?.qlen === 0 && Date.now() < until) await sleep(100);
    t.true(((await ifbRoot())?.qlen ?? 0) >= 1, "the client's SYN sits in A's plug");

    const stillHolding = async (when: string) => {
      t.is(await alias(), aliasA, `${when}: A's IFB, as A made it`);
      t.is((await ifbRoot())?.kind, 'plug', `${when}: its plug`);
      await sleep(300);
      t.false(settled, `${when}: the held client is still held`);
      t.true(((await ifbRoot())?.qlen ?? 0) >= 1, `${when}: its SYN still in the plug`);
    };

    const rel = await synplug(t, ['release', '--state-dir', B], 0);
    t.notRegex(rel.stdout, /released the plug\(s\) of synplug's IFB/, 'not released as a leftover of B');
    await stillHolding('after release through B (no record)');
    await synplug(t, ['teardown', '--state-dir', B], 0);
    await stillHolding('after teardown through B (no record)');

    copyInto(A_IN, ['setup.json', 'plug.json', 'leases.json']);
    const check = await synplug(t, ['check', '--json', '--state-dir', B], 12);
    t.regex(check.stdout, new RegExp(`another state directory's inbound hold of ${SRV} \\(its IFB's alias names state directory mark ${markA}`));
    await synplug(t, ['status', '--state-dir', B], 0);
    await stillHolding('after check and status through B (copied records)');
    const relB = await synplug(t, ['release', '--state-dir', B], 7);
    t.regex(relB.stderr, new RegExp(`mark ${markA}.*Nothing was released`));
    const downB = JSON.parse((await synplug(t, ['teardown', '--json', '--state-dir', B], 0)).stdout) as { removed: string[]; kept: string[] };
    t.deepEqual(
      downB.removed.filter((w) => !w.startsWith('nftables table inet synplug_report')),
      [],
    );
    t.true(
      downB.kept.some((w) => w.includes(markA)),
      JSON.stringify(downB.kept),
    );
    await stillHolding('after release and teardown through B (copied setup.json)');

    await synplug(t, ['release', '--state-dir', A_IN], 0);
    t.is(await within(held, 'the held client once A released'), 'ok');
    await synplug(t, ['teardown', '--state-dir', A_IN], 0);
    t.not((await run('ip', ['link', 'show', 'dev', ifb])).code, 0, "A's teardown removed its IFB");
    // last, so that on the code of before (no mark) the assertions above show what it did
    t.regex(aliasA ?? '', new RegExp(`^synplug inbound hold of ${SRV}; state [0-9a-f]{16}$`), "the IFB's alias named its state directory");
  },
);
