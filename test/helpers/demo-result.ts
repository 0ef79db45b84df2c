/**
 * A `synplug demo` result for tests of its formatting: the local hold on lo
 * via the queue hold, run in a namespace of its own, one restart per phase,
 * each phase made of `requests` (none by default), then `over`.
 */
import { phaseResult, verdictOf } from '../../src/demo/stats.js';
import type { DemoResult, RequestRecord } from '../../src/demo/types.js';

export function demoResult(over: Partial<DemoResult> = {}, requests: RequestRecord[] = []): DemoResult {
  const u = phaseResult('unprotected', requests, [], 1, 1000);
  const p = phaseResult('protected', requests, [], 1, 1000);
  return {
    netns: 'own',
    mode: 'local',
    via: 'queue',
    dev: 'lo',
    addr: '169.254.255.254',
    port: 40000,
    seconds: 1,
    restarts: 1,
    gapMs: 200,
    clients: 16,
    maxHoldMs: 13200,
    setup: { by: 'demo', actions: [], removed: [] },
    phases: { unprotected: u, protected: p },
    ...verdictOf(u, p),
    notices: [],
    ...over,
  };
}
