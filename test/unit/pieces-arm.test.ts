/**
 * The arming of a hold's armed pieces (src/guard/pieces.ts armSteps): a step
 * that several pieces share (the queue hold's chain and its rules: one
 * nftables batch) is run once. Run twice, the batch added the chain's rule
 * twice, and the next arm replaced both (three nftables transactions in
 * phase one, and a plug killed between them left two rules: check exit 12).
 */
import test from 'ava';
import { armSteps } from '../../src/guard/pieces.js';
import type { HoldPieces, Piece, SetupStep } from '../../src/guard/modes/types.js';

test('a step two armed pieces share is one step; a permanent piece is not armed; an armed piece that is there adds nothing', (t) => {
  const shared: SetupStep = { what: 'nftables: add chain; add rule', run: async () => {} };
  const piece = (key: string, lifetime: Piece['lifetime'], status: 'ok' | 'missing'): Piece<unknown, unknown> => ({
    key,
    lifetime,
    judge: () => ({ piece: key, status }),
    add: (_o, st) => (st.status === 'ok' ? [] : [shared]),
  });
  const hold = (list: Piece<unknown, unknown>[]): HoldPieces => ({
    list,
    observe: async () => ({}),
    begin: () => ({}),
    record: () => ({ mode: 'x', dev: 'lo', createdAt: 0 }),
  });
  t.deepEqual(armSteps(hold([piece('table', 'permanent', 'missing'), piece('chain', 'armed', 'missing'), piece('rules', 'armed', 'missing')]), {}), [shared]);
  t.deepEqual(armSteps(hold([piece('chain', 'armed', 'ok'), piece('rules', 'armed', 'ok')]), {}), []);
});
