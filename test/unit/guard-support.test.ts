/**
 * The missing-module error of setup: every missing module, and every module
 * that could not be checked (with why), in one modprobe suggestion, so that
 * following it does not lead to a second failure.
 */
import test from 'ava';
import { release } from 'node:os';
import { MissingSupportError } from '../../src/guard/support.js';
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
