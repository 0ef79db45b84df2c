/**
 * The missing-module error of setup: every missing module, and every module
 * that could not be checked (with why), in one modprobe suggestion, so that
 * following it does not lead to a second failure.
 */
import test from 'ava';
import { release } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinBySymbol, MissingSupportError } from '../../src/guard/support.js';
import { exitCodeOf } from '../../src/cli/exit-codes.js';

test('a module that could not be checked is in the modprobe suggestion, with the reason it could not be checked', (t) => {
  const e = new MissingSupportError(
    [
      { module: 'sch_prio', what: 'qdisc prio' },
      { module: 'sch_plug', what: 'qdisc plug' },
    ],
    [{ module: 'cls_fw', what: 'filter fw' }],
  );
  t.is(e.category, 'missing-module');
  t.is(exitCodeOf(e), 5);
  t.deepEqual(e.missing, ['sch_prio (qdisc prio)', 'sch_plug (qdisc plug)']);
  t.deepEqual(e.unverified, ['cls_fw (filter fw)']);
  t.regex(e.message, /^this kernel lacks what synplug needs: sch_prio \(qdisc prio\), sch_plug \(qdisc plug\); /);
  t.regex(e.message, /\(modprobe sch_prio sch_plug cls_fw\)/);
  // why: not loaded, and the list of built-in modules cannot be read
  const builtin = `/lib/modules/${release()}/modules.builtin`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  t.regex(
    e.message,
    new RegExp(
      `cls_fw \\(filter fw\\) could not be checked: it is not loaded \\(no /sys/module/cls_fw\\), and neither ${builtin} nor /proc/kallsyms, which would tell whether it is built into the kernel, can be read`,
    ),
  );
  t.regex(e.message, /nothing was changed$/);
});

test('without unchecked modules, modprobe names exactly the missing ones', (t) => {
  const e = new MissingSupportError([
    { module: 'sch_plug', what: 'qdisc plug' },
    { module: 'cls_fw', what: 'filter fw' },
  ]);
  t.regex(e.message, /\(modprobe sch_plug cls_fw\)/);
  t.notRegex(e.message, /could not be checked/);
  t.deepEqual(e.unverified, []);
  // a module named twice is suggested once
  t.regex(new MissingSupportError([{ module: 'cls_fw', what: 'filter fw' }], [{ module: 'cls_fw', what: 'filter fw' }]).message, /\(modprobe cls_fw\)/);
});

test('the missing-module sentence names cls_flower or cls_u32 when either would do', (t) => {
  const e = new MissingSupportError([
    { module: 'sch_plug', what: 'qdisc plug' },
    { module: 'cls_flower', alternatives: ['cls_u32'], what: 'a TCP SYN classifier: filter flower or u32' },
  ]);
  t.is(exitCodeOf(e), 5);
  t.regex(e.message, /^this kernel lacks what synplug needs: sch_plug \(qdisc plug\), cls_flower or cls_u32 \(a TCP SYN classifier: filter flower or u32\)\./);
  t.regex(e.message, /\(modprobe sch_plug cls_flower; cls_u32 will do instead of cls_flower\)/);
  t.deepEqual(e.missing, ['sch_plug (qdisc plug)', 'cls_flower or cls_u32 (a TCP SYN classifier: filter flower or u32)']);
});

test('a classifier built into the kernel is found in kallsyms; a module symbol or none is not taken for built in', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'synplug-kallsyms-'));
  try {
    const f = join(dir, 'kallsyms');
    writeFileSync(f, 'ffffffff81f4c6a0 T u32_classify\nffffffff8124125c t u32_classify.cold\n0000000000000000 t fw_classify\t[cls_fw]\n');
    t.true(builtinBySymbol('u32', f));
    t.false(builtinBySymbol('fw', f), 'a loaded module: not built in (its /sys/module entry tells it is there)');
    t.false(builtinBySymbol('flower', f), 'absent from a readable kallsyms: not built in');
    t.is(builtinBySymbol('u32', join(dir, 'none')), undefined, 'no kallsyms');
    writeFileSync(join(dir, 'empty'), '');
    t.is(builtinBySymbol('u32', join(dir, 'empty')), undefined, 'an empty kallsyms tells nothing');
    t.is(builtinBySymbol('nosuchkind', f), undefined);
    writeFileSync(f, '0000000000000000 T fl_classify\n');
    t.true(builtinBySymbol('flower', f), 'addresses hidden (kptr_restrict): the name still tells');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
