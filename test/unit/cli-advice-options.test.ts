/**
 * The commands a text suggests repeat the options the user gave that they
 * need to act on the same holds (`--state-dir`, `--netns`): check with
 * `--state-dir DIR` said "run 'synplug setup ...' to complete it", which,
 * run as written, set up in the default state directory instead. And check's
 * piece column says `ok` in every case (its nothing-recorded list said `OK`).
 */
import test from 'ava';
import { formatCheck, withGivenPlace } from '../../src/cli/format-guard.js';
import type { CheckResult } from '../../src/guard/types.js';

const partial: CheckResult = {
  state: 'partial',
  pieces: [
    { piece: 'nftables table inet synplug_queue', status: 'ok' },
    { piece: 'address 169.254.255.254 on lo', status: 'missing' },
  ],
  holds: [
    {
      id: 'queue',
      mode: 'queue',
      via: 'queue',
      dev: 'lo',
      state: 'partial',
      addrs: ['169.254.255.254'],
      setup: 'synplug setup --via queue --addr 169.254.255.254',
    },
  ],
};

test("check's advice with --state-dir (and --netns) given: each suggested command repeats them", (t) => {
  const text = withGivenPlace(formatCheck(partial), { stateDir: '/srv/synplug state', netns: 'blue' });
  t.is(
    text.split('\n').at(-1),
    `run 'synplug setup --via queue --addr 169.254.255.254 --state-dir "/srv/synplug state" --netns blue' (or 'synplug protect --setup --state-dir "/srv/synplug state" --netns blue', which sets up every recorded hold again) to complete it`,
  );
});

test('nothing given: the advice as it was; a suggestion naming its own --state-dir keeps it', (t) => {
  t.is(withGivenPlace(formatCheck(partial), {}), formatCheck(partial));
  t.is(
    withGivenPlace("tear it down through 'synplug teardown --state-dir /run/other'", { stateDir: '/run/mine' }),
    "tear it down through 'synplug teardown --state-dir /run/other'",
  );
});

test("a quoted name that is no command (an IFB's alias 'synplug inbound hold of DEV') is left as it is", (t) => {
  const alias = "link sp-x: carries synplug's alias 'synplug inbound hold of sp-gtr0', but no record lists it";
  t.is(withGivenPlace(alias, { stateDir: '/s' }), alias);
  t.is(withGivenPlace("'synplug setup' then 'synplug check'", { stateDir: '/s' }), "'synplug setup --state-dir /s' then 'synplug check --state-dir /s'");
});

test("check's pieces read 'ok' (never 'OK') with nothing recorded too, the problems in capitals, as in the set-up case", (t) => {
  const pieces = [
    { piece: 'nftables table inet synplug_queue', status: 'ok' as const },
    { piece: 'address 169.254.255.254 on lo', status: 'missing' as const },
  ];
  const none = formatCheck({ state: 'partial', pieces, holds: [], nothingSetUp: 'synplug is not set up here' });
  const some = formatCheck({ ...partial, pieces });
  for (const text of [none, some]) {
    t.true(text.includes('\n  ok        nftables table inet synplug_queue'), text);
    t.true(text.includes('\n  MISSING   address 169.254.255.254 on lo'), text);
    t.notRegex(text, /\bOK\b/);
  }
});
