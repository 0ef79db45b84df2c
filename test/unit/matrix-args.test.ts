/**
 * bench/matrix/main.ts's options, checked before anything starts
 * (`--check-args`, which scripts/vm/bench-matrix.sh runs on the host before
 * it builds and boots the VM): numbers, names and unknown options are
 * refused with exit 2 and a message naming the option; --help lists every
 * option with its default.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../bench/matrix/main.ts', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../scripts/vm/bench-matrix.sh', import.meta.url));

function matrix(args: string[]) {
  const r = spawnSync(process.execPath, ['--import=tsx', MAIN, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SYNPLUG_IN_VM: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--check-args refuses bad numbers, unknown options and names with exit 2, naming the option', (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['--reloads', 'abc'], /--reloads: 'abc' is not a whole number of at least 1/],
    [['--reloads', '-5'], /--reloads: '-5' is not a whole number of at least 1/],
    [['--reloads', '0'], /--reloads: '0' is not a whole number of at least 1/],
    [['--compare-reloads', '1.5'], /--compare-reloads: '1.5' is not a whole number/],
    [['--connections', '1e3'], /--connections: '1e3' is not a whole number/],
    [['--pause-ms', ''], /--pause-ms is empty/],
    [['--max-hold-ms', '5'], /--max-hold-ms: '5' is not a whole number of at least 10/],
    [['--budget-seconds', '0x10'], /--budget-seconds: '0x10' is not a whole number/],
    [['--reloads'], /--reloads needs a value/],
    [['--reloads', '--rows', 'haproxy-sf'], /--reloads needs a value/],
    [['--bogus'], /unknown option '--bogus'/],
    [['--rows', 'haproxy-sf,nope'], /unknown row 'nope'/],
    [['--modes', 'protect'], /unknown mode 'protect'/],
    [['--client', 'remote'], /unknown client side 'remote'/],
    [['--windows', 'haproxy-sf'], /--windows: 'haproxy-sf' is not ROW:MODE/],
    [['--windows', 'nginx-restart:protected:x'], /--windows: 'nginx-restart:protected:x' is not ROW:MODE/],
    [['--budget-seconds', '10'], /--budget-seconds: '10' is not a whole number of at least 60/],
    [['--reloads', '5', '--reloads', '6'], /--reloads given twice/],
    [['--tag', 'a/b'], /--tag: 'a\/b' holds a '\/'/],
  ];
  for (const [args, re] of cases) {
    const r = matrix(['--check-args', ...args]);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, re, args.join(' '));
    t.notRegex(r.stderr, /\n\s+at /, 'a message, not a stack trace');
  }
});

test('--check-args accepts valid options and touches nothing (exit 0, no VM needed)', (t) => {
  const r = matrix([
    '--check-args',
    '--rows',
    'haproxy-sf,nginx-restart',
    '--modes',
    'unprotected,protected-migrate',
    '--reloads',
    '5',
    '--pause-ms',
    '0',
    '--max-hold-ms',
    '10',
    '--tag',
    'x',
  ]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /options valid: 4 window\(s\), client local/);
});

test('--help lists every option with its default', (t) => {
  const r = matrix(['--help']);
  t.is(r.code, 0);
  for (const [opt, def] of [
    ['--rows', /\[all: haproxy-sf/],
    ['--modes', /\[unprotected,migrate,protected\]/],
    ['--windows', /instead of every --rows x every --modes/],
    ['--client', /\[local\]/],
    ['--reloads', /\[30\]/],
    ['--compare-reloads', /\[10\]/],
    ['--connections', /\[24\]/],
    ['--pause-ms', /\[500\]/],
    ['--max-hold-ms', /max-hold.*\[20000\]/],
    ['--budget-seconds', /\[500\]/],
    ['--out', /JSON and the SVGs go \[bench\/matrix\/results\]/],
    ['--tag', /\[none/],
    ['--i-am-isolated', /run outside the VM/],
    ['--check-args', /check the options and exit/],
  ] as const) {
    const line = r.stdout.split('\n').findIndex((l) => l.trimStart().startsWith(`${opt} `));
    t.true(line >= 0, `${opt} listed`);
    t.regex(
      r.stdout
        .split('\n')
        .slice(line, line + 3)
        .join(' '),
      def,
      opt,
    );
  }
});

test('scripts/vm/bench-matrix.sh checks the options on the host before building or booting (bad options: exit 2)', (t) => {
  const r = spawnSync('bash', [SCRIPT, '--reloads', 'abc'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SYNPLUG_SKIP_BUILD: '0', SYNPLUG_VM_TIMEOUT: '1' },
  }); // a 1 s VM cap, should the check ever let it through
  t.is(r.status, 2, r.stderr);
  t.regex(r.stderr, /--reloads: 'abc' is not a whole number/);
  t.regex(r.stderr, /nothing was built or started/);
  t.notRegex(r.stderr, /npm run build|in the VM/);
});
