/**
 * `synplug history [--json] [-n N]`: the reloads protect, plug and release recorded, in the
 * order they ended, oldest first (the engine is src/guard/history.ts).
 *
 * @module
 */
import { Option, type Command } from 'commander';
import { DEFAULTS, parseUint } from '../guard/config.js';
import { exitCodesHelp } from './exit-codes.js';
import { formatHistoryEntry } from './format-guard.js';
import { STATE_DIR_DEFAULT_HELP, stateDirOf } from './guard-commands.js';
import { jsonOption, run } from './run.js';
import { UsageError } from '../netlink/errors.js';

/** Register `synplug history` on the program. */
export function historyCommand(program: Command): void {
  program
    .command('history')
    .description('the reloads recorded (protect, plug, release), in the order they ended, oldest first')
    .addOption(new Option('-n <count>', 'only the last COUNT (1 or more)'))
    .addOption(new Option('--state-dir <dir>', `state directory (${STATE_DIR_DEFAULT_HELP})`))
    .addOption(jsonOption())
    .addHelpText('after', exitCodesHelp('history'))
    .action(
      run(async (f: { json?: boolean; n?: string; stateDir?: string }) => {
        const n = f.n !== undefined ? parseUint(f.n, '-n') : undefined;
        if (n === 0) throw new UsageError('-n 0 would list no reload: give 1 or more (the last COUNT), or leave -n out for every reload');
        const { readHistory } = await import('../guard/history.js');
        const entries = readHistory(stateDirOf(f.stateDir) ?? DEFAULTS.stateDir, n);
        if (f.json) process.stdout.write(`${JSON.stringify(entries)}\n`);
        else process.stdout.write(entries.length ? `${entries.map(formatHistoryEntry).join('\n')}\n` : 'no reload recorded\n');
      }),
    );
}
