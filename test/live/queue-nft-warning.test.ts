/**
 * What `nft list ruleset` says of the queue hold during a hold, as
 * docs/design.md ("The queue hold") and the README say it: where the rule's
 * verdict is the xt NFQUEUE target through nft_compat (status: `verdict`
 * `compat`; this machine's kernel has no nft queue expression), nft warns
 * that the table "is managed by iptables-nft" and libxtables says it cannot
 * print the inet family's target, both on stderr, while stdout has the rule
 * as `queue num N bypass`; outside a hold, nothing on stderr. The lines the
 * docs quote are the lines nft prints. A fresh user took the warning for a
 * fault (issue #22). In a network namespace of its own (test/helpers/own-netns.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inOwnNetns, runScenarioIfChild } from '../helpers/own-netns.js';
import { stateEnv, synplug } from '../helpers/queue-live.js';

const SELF = fileURLToPath(import.meta.url);
const ENV = 'SYNPLUG_QUEUE_NFT_WARNING_SCENARIO';
const DESIGN = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

const nftList = () => {
  const r = spawnSync('/usr/sbin/nft', ['list', 'ruleset'], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

const scenarios = {
  async hold() {
    const s = stateEnv();
    const setup = synplug(['setup', '--via', 'queue'], s.env);
    const outside = nftList();
    const plug = synplug(['plug', '--max-hold', '20s'], s.env);
    const during = nftList();
    const status = JSON.parse(synplug(['status', '--json'], s.env).stdout) as { holds: Array<{ verdict?: string }> };
    const shown = synplug(['show', 'ruleset'], s.env);
    const release = synplug(['release'], s.env);
    const after = nftList();
    const teardown = synplug(['teardown'], s.env);
    return {
      setup: setup.code,
      plug: plug.code,
      release: release.code,
      teardown: teardown.code,
      outside,
      during,
      after,
      verdict: status.holds[0]?.verdict,
      shown,
    };
  },
};

if (!(await runScenarioIfChild(ENV, scenarios))) {
  const { default: test } = await import('ava');

  test('nft list ruleset during a queue hold: the iptables-nft warning and the libxtables line on stderr, as the docs quote them; none outside a hold', (t) => {
    // biome-ignore lint/suspicious/noExplicitAny: the scenario's JSON result, asserted field by field
    const r = inOwnNetns<any>(SELF, ENV, 'hold', 60_000);
    t.deepEqual([r.setup, r.plug, r.release, r.teardown], [0, 0, 0, 0]);
    t.is(r.outside.code, 0);
    t.is(r.outside.stderr, '', 'outside a hold nft says nothing');
    t.is(r.during.code, 0);
    t.regex(r.during.stdout, /ip daddr 169\.254\.255\.254 tcp flags syn \/ syn,ack queue num 4200 bypass\n/);
    t.is(r.shown.code, 0);
    t.regex(r.shown.stdout, /ip daddr 169\.254\.255\.254 tcp flags syn \/ syn,ack queue num 4200 bypass\n/);
    // synplug's own listing prints nft's warning as nft does (stderr), never the libxtables line
    t.is(r.shown.stderr, '# Warning: table inet synplug_queue is managed by iptables-nft, do not touch!\n', "synplug's own listing: nft's warning only");
    t.is(r.after.stderr, '', 'after the release: nothing');
    // (the code block of a list item, indented)
    const quoted = / *```\n( *# Warning: table inet synplug_queue is managed by iptables-nft, do not touch!\n *libxtables: [^\n]*\n) *```/
      .exec(DESIGN)?.[1]
      .replace(/^ +/gm, '');
    t.truthy(quoted, 'docs/design.md quotes the two lines');
    if (r.verdict === 'compat') t.is(r.during.stderr, quoted, "what nft prints is what the docs quote (the xt NFQUEUE target: this kernel's verdict)");
    else t.is(r.during.stderr, '', `the nft queue expression (verdict ${r.verdict}): no xt statement, no warning`);
    t.true(README.includes('is managed by iptables-nft, do not touch!'), 'the README names it');
  });
}
