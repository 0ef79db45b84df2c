/**
 * When the kernel said what is wrong (extended ack), a refused qdisc is not
 * blamed on a missing module: only an ENOENT whose text is about the kind
 * (or one without any text, where the kind is all that is left) is a
 * KindUnavailableError. Here the device's classes cannot be listed, so the
 * class check cannot decide and the kernel's sentence must.
 */
import test from 'ava';
import { NetlinkError } from '../../src/netlink/errors.js';
import { RTM_NEWQDISC, RTM_NEWTFILTER } from '../../src/netlink/route/constants.js';
import { explainFilter, explainQdisc, KindUnavailableError } from '../../src/tc/explain.js';
import type { TcConnection, TcRequest } from '../../src/tc/types.js';

/** Lists nothing: every dump fails, as on a connection that cannot dump. */
const cannotList: TcConnection = {
  request: () => Promise.reject(new Error('unused')),
  dumpAll: () => Promise.reject(new Error('no dumps here')),
  dumpEach: () => Promise.reject(new Error('no dumps here')),
};

const req: TcRequest = { type: RTM_NEWQDISC, flags: 0, payload: [], ifindex: 7, handle: 0x200000, parent: 0x10001, info: 0, kind: 'pfifo', module: 'sch_fifo' };
const enoent = (extAckMessage?: string) => new NetlinkError({ errno: 2, requestType: 'RTM_NEWQDISC', extAckMessage, capped: false });

test('ENOENT with the kernel\'s "Specified class not found": not a missing module, the kernel\'s sentence first', async (t) => {
  const e = (await explainQdisc(cannotList, enoent('Specified class not found'), 'add', { dev: 'sp-x' }, req)) as NetlinkError;
  t.true(e instanceof NetlinkError);
  t.false(e instanceof KindUnavailableError);
  t.not(e.category, 'missing-module');
  t.is(e.code, 'ENOENT');
  t.true(e.message.startsWith('Specified class not found. '), e.message);
  t.notRegex(e.message, /module|not available/);
  t.regex(e.message, /dev sp-x/);
});

test('ENOENT whose kernel text is about the kind, or with no text at all, is still the missing module', async (t) => {
  for (const ack of ['Specified qdisc kind is unknown', undefined]) {
    const e = await explainQdisc(cannotList, enoent(ack), 'add', { dev: 'sp-x' }, req);
    t.true(e instanceof KindUnavailableError, String(ack));
    t.is((e as KindUnavailableError).module, 'sch_fifo');
    t.is((e as KindUnavailableError).category, 'missing-module');
  }
});

test('ENOENT on a filter with several actions and no kernel text names every candidate module; its category is missing-module, set by its class', async (t) => {
  const filterReq: TcRequest = {
    type: RTM_NEWTFILTER,
    flags: 0,
    payload: [],
    ifindex: 7,
    handle: 0,
    parent: 0xfffffff2,
    info: 0x30300,
    kind: 'matchall',
    module: 'cls_matchall',
    actions: [
      { kind: 'gact', module: 'act_gact' },
      { kind: 'mirred', module: 'act_mirred' },
    ],
  };
  const kernel = new NetlinkError({ errno: 2, requestType: 'RTM_NEWTFILTER', extAckOffset: 36, capped: false });
  const e = (await explainFilter(cannotList, kernel, 'add', { dev: 'sp-x' }, filterReq)) as NetlinkError;
  t.true(e instanceof NetlinkError);
  t.false(e instanceof KindUnavailableError);
  t.is(e.name, 'NetlinkError');
  t.is(e.category, 'missing-module');
  t.is(e.code, 'ENOENT');
  t.is(e.requestType, 'RTM_NEWTFILTER');
  t.is(e.extAckOffset, 36);
  t.is(
    e.message,
    "filter kind 'matchall' or action kinds 'gact', 'mirred' not available in this kernel (modules cls_matchall, act_gact, act_mirred: one of them is missing)",
  );
  t.is(e.explanation, e.message);
});
