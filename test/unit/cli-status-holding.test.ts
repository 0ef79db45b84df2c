/**
 * `status` during overlapping protects: the "HOLDING since" line was
 * plug.json's (the holder that recorded it: one of them, not said which),
 * so it could name a later protect and a time after the hold began. It now
 * names the oldest live lease, and the last deadline.
 */
import test from 'ava';
import { formatStatus } from '../../src/cli/format-guard.js';
import { inboundHoldStatus, statusResult } from '../helpers/guard-status.js';

const T0 = Date.parse('2026-12-06T07:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

test('two overlapping protects: since the oldest lease (its pid), until the later deadline; plug.json named the newer', (t) => {
  const r = statusResult([inboundHoldStatus()], {
    // plug.json: written by the second protect
    plug: { version: 1, state: 'buffering', owner: 'protect', pid: 222, dev: 'eth0', since: T0 + 3000, deadline: T0 + 13_000 },
    leases: [
      { owner: 'protect', pid: 222, command: ['b'], since: T0 + 3000, deadline: T0 + 13_000, holds: ['inbound:eth0'] },
      { owner: 'protect', pid: 111, command: ['a'], since: T0, deadline: T0 + 10_000, holds: ['inbound:eth0'] },
    ],
  });
  const line = formatStatus(r)
    .split('\n')
    .find((l) => l.startsWith('hold: '));
  t.is(line, `hold: HOLDING since ${at(0)} (since the oldest of 2 live leases, protect pid 111; each listed below; until ${at(13)} at most)`);
});

test('one lease: its own since and pid; no lease (a stale record): plug.json, as before', (t) => {
  const plug = { version: 1, state: 'buffering', owner: 'manual', pid: 333, dev: 'eth0', since: T0, deadline: T0 + 10_000 } as const;
  const one = statusResult([inboundHoldStatus()], { plug, leases: [{ owner: 'manual', pid: 333, since: T0, deadline: T0 + 10_000, holds: ['inbound:eth0'] }] });
  t.true(formatStatus(one).includes(`hold: HOLDING since ${at(0)} (by manual pid 333, until ${at(10)})`));
  t.true(formatStatus(statusResult([inboundHoldStatus()], { plug })).includes(`hold: HOLDING since ${at(0)} (by manual pid 333, until ${at(10)})`));
});
