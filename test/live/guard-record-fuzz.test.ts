/**
 * Live (this kernel, through the built CLI): no record content may produce
 * an internal error, a stack trace, an undocumented exit code, or a change
 * in the kernel (issue #19, deliverable 4). A property test feeds records
 * synplug writes, mutated (test/helpers/record-mutations.ts), to every
 * command that reads them: check, status, plug, release, teardown, protect.
 * And `"holds": {}` (defect 4 as it was found: check said "set up ()", plug
 * "plugged") is refused by each with exit 6 and what to do.
 *
 * Runs in a namespace of this file's own (sp-rfz-PID) with a veth pair; the
 * kernel's state is judged by the reference tools (nft, ip, tc) before and
 * after each record's commands.
 */
import test from 'ava';
import fc from 'fast-check';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboundNetns, IP, TC, CLI } from '../helpers/inbound-netns.js';
import { netnsCookie } from '../../src/netlink/netns.js';
import { mutatedRecord } from '../helpers/record-mutations.js';

const DEV = 'sp-rfz0';
const N = inboundNetns('sp-rfz', DEV, 'sp-rfz1');

/** The commands that read the records, with their arguments. */
const COMMANDS: string[][] = [['check'], ['status', '--json'], ['plug', '--max-hold', '2s'], ['release'], ['teardown'], ['protect', '--', 'true']];

/** The exit codes `synplug CMD --help` documents. */
function documentedCodes(cmd: string): Set<number> {
  const help = execFileSync(process.execPath, [CLI, cmd, '--help'], { encoding: 'utf8' });
  const section = help.slice(help.indexOf('\nExit codes:\n') + 1).split('\n\n')[0];
  return new Set([...section.matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1])));
}

const snapshot = () => ({
  ruleset: execFileSync(IP, ['netns', 'exec', N.ns, '/usr/sbin/nft', 'list', 'ruleset'], { encoding: 'utf8' }),
  addrs: N.sh(IP, '-j', 'addr', 'show'),
  links: (JSON.parse(N.sh(IP, '-j', 'link', 'show')) as Array<{ ifname: string; flags: string[] }>).map((l) => `${l.ifname} ${l.flags.join(',')}`),
  qdiscs: N.sh(TC, 'qdisc', 'show'),
  filters: N.sh(TC, 'filter', 'show', 'dev', DEV, 'ingress'),
});

/** The CLI with `--state-dir SD --netns NS` right after the command's name (before protect's `--`). */
function synplug(sd: string, cmd: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [CLI, cmd[0], '--state-dir', sd, '--netns', N.ns, ...cmd.slice(1)];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function stateDirWith(file: string, text: string): string {
  const sd = join(mkdtempSync(join(tmpdir(), 'synplug-rfz-')), 'state');
  mkdirSync(sd, { mode: 0o700 });
  writeFileSync(join(sd, file), text);
  return sd;
}

test.before(() => N.create());
test.after.always(() => N.destroy());

test.serial(
  '"holds": {} is refused by check, plug, protect, status, teardown and release: exit 6, naming the file and what to do; nothing changed',
  async (t) => {
    const before = snapshot();
    for (const cmd of COMMANDS) {
      const sd = stateDirWith('setup.json', '{"version":2,"holds":{}}');
      try {
        const r = await synplug(sd, cmd);
        t.is(r.code, 6, `${cmd[0]}: ${r.stdout}${r.stderr}`);
        t.regex(r.stderr, /setup\.json is not a setup record synplug wrote: remove it \(then run 'synplug setup' again/, cmd[0]);
        t.regex(r.stderr, /'holds' is empty/, cmd[0]);
        t.notRegex(r.stdout, /plugged|set up \(\)/, cmd[0]);
      } finally {
        rmSync(join(sd, '..'), { recursive: true, force: true });
      }
    }
    t.deepEqual(snapshot(), before);
  },
);

test.serial(
  'property: mutated records given to every command: a documented exit code, no internal error or stack trace, nothing changed in the kernel',
  async (t) => {
    t.timeout(15 * 60_000);
    const codes = new Map(COMMANDS.map((c) => [c[0], documentedCodes(c[0])]));
    const before = snapshot();
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(mutatedRecord(Date.now(), DEV, netnsCookie(N.ns)), async ({ file, value }) => {
        const text = JSON.stringify(value) ?? '';
        const dirs = COMMANDS.map(() => stateDirWith(file, text));
        try {
          // each command on its own copy, all at once (they never share a directory)
          const results = await Promise.all(COMMANDS.map((cmd, i) => synplug(dirs[i], cmd)));
          for (const [i, r] of results.entries()) {
            const cmd = COMMANDS[i][0];
            const what = `${cmd} with ${file} ${text.slice(0, 300)}: exit ${r.code}\n${r.stderr}`;
            if (!codes.get(cmd)!.has(r.code)) throw new Error(`undocumented exit code: ${what}`);
            if (/internal error|TypeError|RangeError|\n\s+at /.test(r.stderr + r.stdout)) throw new Error(`internal error or stack trace: ${what}`);
          }
          const after = snapshot();
          if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`the kernel changed: ${file} ${text.slice(0, 300)}`);
          runs++;
        } finally {
          for (const d of dirs) rmSync(join(d, '..'), { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
    t.is(runs, 25);
    t.log(`${runs} mutated records x ${COMMANDS.length} commands`);
  },
);
