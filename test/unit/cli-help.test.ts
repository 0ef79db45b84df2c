/**
 * Exit codes in the help texts: every command's `--help` lists its codes
 * (src/cli/exit-codes.ts COMMAND_EXIT_CODES), each of them one of the codes
 * of the README's table, which `synplug --help` prints too. Which codes a
 * command really returns is checked against its behaviour in the live suite
 * (test/live/guard-cli.test.ts: bad input, a missing device, not root).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { COMMAND_EXIT_CODES, EXIT, EXIT_HELP, exitCodesHelp, exitCodesTopic } from '../../src/cli/exit-codes.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const CLI_DOC = readFileSync(fileURLToPath(new URL('../../docs/cli.md', import.meta.url)), 'utf8');

/** The codes of the README's exit-code table ("| 126 / 127 | ..." gives both). */
function readmeCodes(): string[] {
  const from = README.indexOf('### Exit codes');
  const table = README.slice(from, README.indexOf('\n\n', README.indexOf('| code |', from)));
  const codes: string[] = [];
  for (const m of table.matchAll(/^\| ([0-9a-z /]+?) \|/gm)) {
    if (m[1] === 'code') continue;
    codes.push(...m[1].split(' / '));
  }
  return codes;
}

/** A command's whole --help text, as commander writes it (with the text added after), 80 columns wide. */
function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({
    writeOut: (s) => {
      out += s;
    },
    getOutHelpWidth: () => 80,
  });
  cmd.outputHelp();
  return out;
}

/** The codes listed under "Exit codes:" in a help text. */
function listed(help: string): string[] {
  const section = help.slice(help.indexOf('\nExit codes:\n') + 1).split('\n\n')[0];
  return [...section.matchAll(/^ {2}(\d+|other) /gm)].map((m) => m[1]);
}

test('the README table, the exit codes of synplug --help, of help exit-codes and EXIT hold the same codes', (t) => {
  const fromEnum = Object.values(EXIT).map(String).sort();
  t.deepEqual([...readmeCodes()].sort(), [...fromEnum, 'other'].sort());
  t.deepEqual(listed(`\n${EXIT_HELP}`).sort(), [...fromEnum, 'other'].sort());
  // synplug --help: every code, each in a few words (the whole table: help exit-codes)
  const top = helpOf(buildProgram());
  t.deepEqual(listed(top).sort(), [...fromEnum, 'other'].sort());
  t.true(top.includes('synplug help exit-codes'));
  t.true(exitCodesTopic().includes(EXIT_HELP));
});

test("every command's --help lists exit codes, each one of the table's, without repeats", (t) => {
  const program = buildProgram();
  const names = program.commands.map((c) => c.name()).sort();
  t.deepEqual(names, Object.keys(COMMAND_EXIT_CODES).sort());
  const all = new Set<string>(readmeCodes());
  for (const cmd of program.commands) {
    const codes = listed(helpOf(cmd));
    t.true(codes.length >= 2, cmd.name());
    t.is(new Set(codes).size, codes.length, cmd.name());
    for (const c of codes) t.true(all.has(c), `${cmd.name()}: ${c}`);
    t.deepEqual(
      codes,
      COMMAND_EXIT_CODES[cmd.name() as keyof typeof COMMAND_EXIT_CODES].map(([c]) => String(c)),
      cmd.name(),
    );
    t.is(codes[0], '0', cmd.name());
  }
});

test('codes each command is known to return are listed, with the meaning the README gives them', (t) => {
  const program = buildProgram();
  const help = (name: string) => helpOf(program.commands.find((c) => c.name() === name)!);
  // a missing device is exit 2 everywhere (README: "2 | bad arguments or input, e.g. a device that does not exist")
  for (const name of ['setup', 'check', 'plug', 'release', 'protect', 'status', 'teardown', 'show']) {
    t.regex(help(name), /^ {2}2 {4}.*a device that does not exist/m, name);
    t.notRegex(help(name), /^ {2}3 .*(no such device|does not exist)/m, name);
  }
  // not root: 4 (nftables needs CAP_NET_ADMIN even to read)
  for (const name of ['setup', 'check', 'plug', 'release', 'protect', 'status', 'teardown', 'show']) t.true(listed(help(name)).includes('4'), name);
  t.false(listed(help('decode')).includes('4'));
  t.true(listed(help('protect')).includes('other'));
  for (const name of ['setup', 'check', 'show', 'decode']) t.false(listed(help(name)).includes('other'), name);
});

test('exit 4 for demo: the top-level help, demo --help and the README agree that demo without --here needs CAP_SYS_ADMIN too (--here only with --inbound)', (t) => {
  const row = (text: string) => text.replace(/\s+/g, ' ');
  const top = row(EXIT_HELP.slice(EXIT_HELP.indexOf('\n  4 '), EXIT_HELP.indexOf('\n  5 ')));
  t.regex(top, /demo also CAP_SYS_ADMIN \(it creates a network namespace; 'demo --here' does not, unless --inbound\)/);
  const demo = row(helpOf(buildProgram().commands.find((c) => c.name() === 'demo')!));
  t.regex(demo, /Needs CAP_NET_ADMIN and CAP_SYS_ADMIN \(root; --here: CAP_NET_ADMIN alone, unless --inbound\)/);
  const readme = README.split('\n').find((l) => l.startsWith('| 4 |'))!;
  t.regex(readme, /`demo` also CAP_SYS_ADMIN \(it creates a network namespace; `demo --here` does not, unless `--inbound`\)/);
});

test("every command's --help is short: at most 45 lines at 80 columns, each option and argument on one line, none wider (issue #22, #24 item 5: protect's was 102 lines)", (t) => {
  for (const cmd of buildProgram().commands) {
    const help = helpOf(cmd);
    const lines = help.trimEnd().split('\n');
    t.true(lines.length <= 45, `${cmd.name()}: ${lines.length} lines`);
    for (const l of lines) t.true(l.length <= 80, `${cmd.name()}: ${l}`);
    // a continuation line (a wrapped description) starts with the description column's spaces
    for (const section of ['Options:', 'Arguments:']) {
      const at = help.indexOf(`\n${section}\n`);
      if (at < 0) continue;
      const items = help
        .slice(at + section.length + 2)
        .split('\n\n')[0]
        .split('\n');
      for (const l of items) t.regex(l, /^ {2}\S/, `${cmd.name()} ${section} one line each: '${l}'`);
    }
    t.regex(help, /Each in full: synplug help exit-codes\. Everything else: docs\/cli\.md\./, cmd.name());
  }
});

test('every option of every command is still in its --help, and docs/cli.md, where the help points, names it', (t) => {
  for (const cmd of buildProgram().commands) {
    const help = helpOf(cmd);
    for (const o of cmd.options) {
      if ((o as unknown as { hidden?: boolean }).hidden) continue;
      t.true(help.includes(o.flags), `${cmd.name()}: ${o.flags} in --help`);
      if (o.long && o.long !== '--help') t.true(CLI_DOC.includes(o.long), `${cmd.name()}: ${o.long} in docs/cli.md`);
    }
  }
});

test("'synplug help exit-codes' prints the table and each command's codes with their whole meaning", (t) => {
  const topic = exitCodesTopic();
  t.true(topic.startsWith(EXIT_HELP));
  for (const [name, lines] of Object.entries(COMMAND_EXIT_CODES)) {
    const at = topic.indexOf(`\n${name}:\n`);
    t.true(at > 0, name);
    const section = topic
      .slice(at + name.length + 3)
      .split('\n\n')[0]
      .trimEnd();
    t.deepEqual(
      section.split('\n').map((l) => l.trim()),
      lines.map(([c, m]) => `${String(c).padEnd(4)} ${m}`.trim()),
      name,
    );
  }
  // what a user needs from protect's codes is there in full
  t.regex(topic, /^ {2}10 {3}the --check command failed: .*"category": "check-failed"/m);
});

test("exit 7 names the queue hold's refusals too (a queue bound by someone else, a foreign rule on its number), as the README does: setup, protect and plug, in help exit-codes and each --help", (t) => {
  const queue = /netfilter queue is bound by someone else, or used by a rule that is not synplug's/;
  t.regex(EXIT_HELP.split('\n  8 ')[0].split('\n  7 ')[1].replace(/\s+/g, ' '), queue);
  for (const c of ['setup', 'protect', 'plug'] as const) {
    const seven = COMMAND_EXIT_CODES[c].find((l) => l[0] === EXIT.FOREIGN_QDISC);
    t.truthy(seven, `${c} lists exit 7`);
    t.regex(seven![1], queue, c);
    t.regex(exitCodesHelp(c), /\n {2}7 {4}a qdisc, filter, queue or hold there is not this directory's\n/, c);
  }
  const row = README.split('\n').find((l) => l.startsWith('| 7 |'));
  t.regex(row ?? '', /netfilter queue is bound by someone else, or used by a rule that is not synplug's/);
});
