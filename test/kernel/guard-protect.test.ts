/**
 * Kernel (VM): `protect` holds new connections to 169.254.255.254 in the plug
 * while the command runs, and only those. TCP servers run in the test process;
 * the protected command is a shell that waits for a file the test creates, so
 * every assertion is about order (connected before/after the command ended),
 * never about speed.
 *
 * `protect` is spawned as the CLI where the behaviour is the CLI's (exit
 * status, --json, exit 8/127), and called in-process otherwise.
 */
import test from 'ava';
import { existsSync, writeFileSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setup, protect, check } from '../../src/guard/index.js';
import { startWatchdog } from '../../src/guard/watchdog.js';
import {
  ADDR,
  TEST_TIMEOUT,
  cli,
  serve,
  probe,
  within,
  waitFor,
  sleep,
  scratch,
  gatedCommand,
  openGate,
  startedPid,
  readPlugJson,
  plugCounters,
  activeElements,
  assertPlugReleased,
  assertLoClean,
  kill,
  useGuardVm,
  setupWithProxy,
  startProtect,
  gate,
  assertArmed,
  assertUnarmed,
} from '../helpers/guard-vm.js';

useGuardVm(test);

test.serial('protect --json: a SYN to 169.254.255.254 is held (not reset) until the command ends; one to 127.0.0.1 is not held', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);
  const local = await serve('127.0.0.1', 'local');
  t.teardown(() => {
    void local.close();
  });
  const {
    p,
    gate: { go },
  } = await startProtect(t, ['--json', '--max-hold', '120s']);

  const held = probe(ADDR, proxy.port, ADDR);
  const free = probe('127.0.0.1', local.port);
  t.is(await within(free.data, 'the connection to 127.0.0.1'), 'local');
  await assertArmed(t, 'during the hold');
  // Give a SYN that is not held every chance to show it.
  await sleep(1000);
  t.is(held.connectedAt, undefined, 'the connection to 169.254.255.254 is held while the command runs');
  t.is(held.error, undefined, 'and not reset');

  const tGo = Date.now();
  writeFileSync(go, '');
  const r = await within(p.done, 'protect to exit');
  t.is(r.code, 0, r.stderr);
  t.is(await within(held.data, 'the held connection to complete after the release'), 'proxy');
  t.is(held.error, undefined);
  t.true(free.connectedAt! < tGo, 'the 127.0.0.1 connection completed while the plug held');
  t.true(held.connectedAt! >= tGo, 'the 169.254.255.254 connection completed only after the command ended');

  const j = JSON.parse(r.stdout) as {
    exitCode: number;
    report: { holdMs: number; heldSyns: number; dropped: number; refused: number; reset: number; lossless: boolean };
    maxHoldReached: boolean;
    overhead: { plugAckToCommandStartUs: number; commandExitToReleaseAckUs: number | null; totalUs: number };
  };
  t.is(j.exitCode, 0);
  t.false(j.maxHoldReached);
  t.true(j.report.holdMs > 0);
  t.true(j.report.heldSyns >= 1, `heldSyns ${j.report.heldSyns}`);
  t.is(j.report.dropped, 0);
  t.true(j.overhead.plugAckToCommandStartUs >= 0);
  t.true(j.overhead.commandExitToReleaseAckUs !== null && j.overhead.commandExitToReleaseAckUs >= 0);
  t.is(j.overhead.totalUs, j.overhead.plugAckToCommandStartUs + j.overhead.commandExitToReleaseAckUs!);
  t.like(readPlugJson(), { state: 'released', pid: p.child.pid });
  t.deepEqual(await activeElements(), [], 'marking is off');
  await assertUnarmed(t, 'after protect');
});

test.serial('a failing command: protect releases and exits with its status', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);

  const r = await cli(['protect', '--json', '--', 'sh', '-c', 'exit 3']);
  t.is(r.code, 3, r.stderr);
  t.like(JSON.parse(r.stdout), { exitCode: 3, signal: null, maxHoldReached: false });
  t.like(readPlugJson(), { state: 'released', owner: 'protect' });
  t.deepEqual(await activeElements(), [], 'marking is off');
  const after = probe(ADDR, proxy.port, ADDR);
  t.is(await within(after.data, 'a new connection after protect'), 'proxy');
  await assertPlugReleased(t, proxy.port, 'after a failing command');
});

test.serial('a command that does not exist: exit 127, nothing plugged', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  const recBefore = readPlugJson();
  const countersBefore = await plugCounters();

  const r = await cli(['protect', '--', '/nonexistent/synplug-no-such-command', 'arg']);
  t.is(r.code, 127, r.stderr);
  t.regex(r.stderr, /command not found: '\/nonexistent\/synplug-no-such-command'/);
  t.deepEqual(readPlugJson(), recBefore, 'plug.json untouched: nothing was plugged');
  t.deepEqual(await activeElements(), [], 'marking never turned on');
  t.deepEqual(await plugCounters(), countersBefore);
});

test.serial('--max-hold fires: the plug is released at the deadline while the command still runs; the watchdog stays quiet', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const proxy = await setupWithProxy(t);
  const {
    p,
    rec,
    gate: { go },
  } = await startProtect(t, ['--json', '--max-hold', '5s']);
  const held = probe(ADDR, proxy.port, ADDR);
  t.true(held.sentAt < rec.deadline, 'the SYN was sent inside the window');

  t.is(await within(held.data, 'the held connection to complete at max-hold'), 'proxy');
  t.true(held.connectedAt! >= rec.deadline, 'held until the deadline');
  // plug.json is written once the kernel acked the release, which can be just after the held SYN got through.
  await waitFor(() => readPlugJson()?.state === 'released', 'plug.json to say released', { ms: 10_000 });
  t.like(readPlugJson(), { state: 'released', pid: p.child.pid });
  // Leave the watchdog's own deadline (WATCHDOG_GRACE_MS, 250 ms later) time to pass while the command runs.
  while (Date.now() < rec.deadline + 1500) await sleep(100);
  t.is(p.ended, undefined, 'protect still waits for the command');

  writeFileSync(go, '');
  const r = await within(p.done, 'protect to exit');
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout) as {
    maxHoldReached: boolean;
    exitCode: number;
    report: { holdMs: number; heldSyns: number };
    overhead: { commandExitToReleaseAckUs: number | null };
  };
  t.true(j.maxHoldReached);
  t.is(j.exitCode, 0);
  t.true(j.report.holdMs > 0);
  t.true(j.report.heldSyns >= 1, `heldSyns ${j.report.heldSyns}`);
  t.is(j.overhead.commandExitToReleaseAckUs, null);
  t.regex(r.stderr, /max-hold of 5000 ms reached: released the hold while the command still runs/);
  // protect released the plug itself: its watchdog had nothing left to release.
  t.notRegex(r.stderr, /synplug watchdog/);
});

test.serial('--wait-listen: a reload that returns before its new listener exists is released only once the new listener appears', async (t) => {
  t.timeout(TEST_TIMEOUT);
  // This test runs protect in this process (the library), so its watchdog is
  // src/cli/bin/watchdog-main.ts under tsx, not the bundle the CLI starts: its
  // first start transpiles the watchdog's whole import graph in a fresh VM,
  // which under a loaded host took longer than protect's 30 s start limit.
  // Start one once, with a longer limit, to fill tsx's cache first.
  (await startWatchdog(600_000)).done();
  await setup();
  const old = await serve(ADDR, 'old');
  const port = old.port;
  t.teardown(() => old.close());
  const { dir, started, go } = gate(t);
  const ncPidFile = join(dir, 'nc.pid');
  t.teardown(() => {
    openGate(go);
    if (existsSync(ncPidFile)) kill(Number(readFileSync(ncPidFile, 'utf8')));
  });
  // The reload: returns at once; its new listener (busybox nc on [::]:port, which
  // accepts IPv4 too) appears a second later, answers "new" once, and exits.
  const newServer = join(dir, 'new-server.sh');
  writeFileSync(newServer, `sleep 1\necho $$ > ${ncPidFile}\nexec busybox nc -l -p ${port} -e echo new\n`);

  let finished = false;
  let failure = '';
  const running = protect({
    command: gatedCommand(started, go, `sh ${newServer} </dev/null >/dev/null 2>&1 &`),
    maxHoldMs: 120_000,
    waitListen: { address: ADDR, port },
  }).finally(() => {
    finished = true;
  });
  running.catch((e: unknown) => {
    failure = (e as Error)?.stack ?? String(e);
  });
  await waitFor(() => startedPid(started) !== undefined, 'the protected command to start', {
    abort: () => (finished ? `protect ended: ${failure}` : undefined),
  });
  // The old proxy stops listening; a client connects during the reload.
  await old.close();
  const held = probe(ADDR, port, ADDR);
  await sleep(500);
  t.is(held.connectedAt, undefined, 'held');
  writeFileSync(go, '');

  const r = await within(running, 'protect to return');
  t.false(r.maxHoldReached, 'released for the new listener, not at max-hold');
  t.is(r.exitCode, 0);
  t.like(r.newListener, { port });
  t.true(existsSync(ncPidFile), 'the new listener was started');
  t.is(await within(held.data, 'the held connection to reach the new listener'), 'new\n');
  t.is(held.error, undefined, 'not refused: nothing was released while no listener existed');
  t.true(r.report.heldSyns >= 1, `heldSyns ${r.report.heldSyns}`);
});

test.serial('not set up: protect exits 8 and does not run the command', async (t) => {
  t.timeout(TEST_TIMEOUT);
  const dir = scratch(t);
  const marker = join(dir, 'ran');
  t.is((await check()).state, 'absent');

  const r = await cli(['protect', '--', 'touch', marker]);
  t.is(r.code, 8, r.stderr);
  t.regex(r.stderr, /not set up.*The command was NOT run/s);
  t.false(existsSync(marker), 'the command did not run');
  await assertLoClean(t, 'after protect refused');
});

test.serial('a connection in flight while the armed pieces come and go loses nothing: a bulk stream over lo completes byte for byte', async (t) => {
  t.timeout(TEST_TIMEOUT);
  await setup();
  await assertUnarmed(t, 'after setup');
  // a receiver on 169.254.255.254 that hashes what it gets and answers its count and hash at the end
  const server = createServer((sock) => {
    const h = createHash('sha256');
    let n = 0;
    sock.on('data', (d: Buffer) => {
      h.update(d);
      n += d.length;
    });
    sock.on('end', () => sock.end(`${n} ${h.digest('hex')}`));
  });
  await new Promise<void>((r) => server.listen(0, ADDR, r));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  // established before the hold: its packets pass the tree from phase one on, and the removal after the release
  const c = connect({ host: ADDR, port, localAddress: ADDR });
  await within(new Promise<void>((r, j) => c.once('connect', r).once('error', j)), 'the stream to connect');
  const sent = createHash('sha256');
  let total = 0;
  let stop = false;
  const chunk = Buffer.alloc(64 * 1024);
  const pump = (async () => {
    // bounded: at most 512 MiB, or until told to stop (the test's end stops it, passed or not)
    for (let i = 0; !stop && total < 2 ** 29; i++) {
      chunk.fill(i & 0xff);
      sent.update(chunk);
      total += chunk.length;
      if (!c.write(chunk)) await new Promise((r) => c.once('drain', r));
    }
  })();
  t.teardown(() => {
    stop = true;
    c.destroy();
  });
  const answer = new Promise<string>((r, j) => {
    let text = '';
    c.on('data', (d: Buffer) => {
      text += d.toString();
    });
    c.once('end', () => r(text));
    c.once('error', j);
  });
  const {
    p,
    gate: { go },
  } = await startProtect(t, ['--max-hold', '120s']);
  await assertArmed(t, 'during the hold');
  await sleep(300);
  writeFileSync(go, '');
  const r = await within(p.done, 'protect to exit');
  t.is(r.code, 0, r.stderr);
  await assertUnarmed(t, 'after protect');
  await sleep(300);
  stop = true;
  await pump;
  c.end();
  const [n, hash] = (await within(answer, "the receiver's count and hash")).split(' ');
  t.true(total > 0);
  t.is(Number(n), total, 'every byte arrived');
  t.is(hash, sent.digest('hex'), 'in order, unchanged');
});
