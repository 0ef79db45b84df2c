/**
 * Running the protected command: resolved before plugging, started behind a
 * gate so that the (slow) fork happens *before* the plug window, and only the
 * gate's opening (one byte written to a pipe) happens inside it.
 *
 * The gate is `/bin/sh -c 'read -r _ <&3 && exec "$@" 3<&-; exit 125'`: the
 * shell only waits on fd 3 and then replaces itself with the command; the
 * command's arguments are passed as `"$@"`, never parsed by a shell. If
 * synplug dies before opening the gate, the pipe closes, `read` fails, and the
 * command never runs unprotected.
 *
 * The pipe is made with pipe2(O_CLOEXEC) through the C library (koffi, as the
 * netlink socket is), not as a Node stream: opening the gate is then one
 * write(2) of one byte, with none of a stream's bookkeeping inside the plug
 * window (`npm run bench:protect`, 2026-12-01, load 6-9 on 2 cores: plug ack
 * to gate opened 94-104 µs median with a Node stream, 33-35 µs with this
 * write; Python's own os.write waking the same gate shell takes 32-40 µs
 * here: what is left is the kernel waking the shell).
 *
 * @module
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, readdirSync, statSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { SynplugError, UsageError, errnoName } from '../netlink/errors.js';
import { isCloseOnExec, lastErrno, libc, setCloseOnExec, SOCK_CLOEXEC } from '../netlink/libc.js';
import { CommandError } from './errors.js';

export { CommandError };

/**
 * The status the gate shell exits with when the gate closes before the
 * command ran (synplug died or aborted): a fact about the shell script below,
 * not an exit code of synplug (the CLI maps the error categories).
 */
export const GATE_ABORTED_STATUS = 125;

/** The gate: wait for one line on fd 3, then exec the command; exit {@link GATE_ABORTED_STATUS} if the line never comes. */
const GATE_SCRIPT = `read -r _ <&3 && exec "$@" 3<&-; exit ${GATE_ABORTED_STATUS}`;

/** A user to run the command as (from the passwd database). */
export interface RunAsUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/**
 * Look a user up in the passwd database (`getent passwd`, so NSS sources
 * count; /etc/passwd when getent is absent).
 * @throws {UsageError} no such user
 */
export function lookupUser(name: string): RunAsUser {
  if (!/^[A-Za-z0-9_.][A-Za-z0-9_.-]*\$?$/.test(name) && !/^[0-9]+$/.test(name)) throw new UsageError(`--user: '${name}' is not a valid user name`);
  let line: string | undefined;
  try {
    line = execFileSync('getent', ['passwd', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0];
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      line = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((l) => l.split(':')[0] === name || l.split(':')[2] === name);
    }
  }
  if (!line) throw new UsageError(`--user: no user '${name}' on this system`);
  const f = line.split(':');
  return { name: f[0], uid: Number(f[2]), gid: Number(f[3]), home: f[5] || '/' };
}

/**
 * Find the executable the command names, as execvp would (PATH search unless it holds a '/').
 * @returns an absolute or relative path that exists and is executable
 * @throws {UsageError} an empty command
 * @throws {CommandError} not found (`command-not-found`) or not executable (`command-not-executable`)
 */
export function resolveCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  if (argv.length === 0 || argv[0] === '') throw new UsageError('no command given: use synplug protect [options] -- COMMAND [ARGS...]');
  const name = argv[0];
  const candidates = name.includes('/')
    ? [name]
    : (env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, name));
  let sawNonExec: string | undefined;
  for (const c of candidates) {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(c);
    } catch {
      continue;
    }
    if (st.isDirectory()) {
      sawNonExec = c;
      continue;
    }
    try {
      accessSync(c, fsConstants.X_OK);
      return c;
    } catch {
      sawNonExec = c;
    }
  }
  if (sawNonExec) throw new CommandError(`cannot execute '${sawNonExec}': permission denied or a directory; the command was not run`, 'command-not-executable');
  throw new CommandError(`command not found: '${name}'${name.includes('/') ? '' : ' (searched PATH)'}; the command was not run`, 'command-not-found');
}

/** A command started behind its gate. */
export interface GatedCommand {
  child: ChildProcess;
  /** Open the gate: the command execs. One byte written to the pipe, one write(2). */
  open(): void;
  /** Close our end of the gate pipe once the command runs. */
  close(): void;
  /** Close the gate without running the command (the shell exits {@link GATE_ABORTED_STATUS}). */
  abort(): void;
  /** Resolves with the exit code (or 128 + signal number) and the signal name. */
  exited: Promise<{ code: number; signal: NodeJS.Signals | null; at: bigint }>;
}

/**
 * Fork the gate shell with the command behind it; resolves once the process
 * exists (the `spawn` event), before the command itself runs.
 * @param argv the command and its arguments (argv[0] already resolved or not: the gate's exec searches PATH)
 * @param options `user` to run as (uid, gid and HOME/USER/LOGNAME set), stdio inherited
 * @throws {SynplugError} /bin/sh cannot be started
 */
export function startGated(argv: readonly string[], options: { user?: RunAsUser; env?: NodeJS.ProcessEnv } = {}): Promise<GatedCommand> {
  const env = { ...(options.env ?? process.env) };
  if (options.user) Object.assign(env, { HOME: options.user.home, USER: options.user.name, LOGNAME: options.user.name });
  const { r, w } = gatePipe();
  let child: ChildProcess;
  // Run as another user: it gets stdin, stdout and stderr only, as sudo does (closefrom), never a descriptor this
  // process inherited (a pipe of the caller's) or opened without FD_CLOEXEC: those are closed across the exec for
  // this spawn alone (spawn forks and execs synchronously), then inherited again as they were.
  const restore = options.user ? closeOnExecAbove2() : [];
  try {
    // the read end becomes the shell's fd 3 (spawn forks synchronously: the child has it when spawn returns)
    child = spawn('/bin/sh', ['-c', GATE_SCRIPT, 'synplug-gate', ...argv], {
      stdio: ['inherit', 'inherit', 'inherit', r],
      env,
      uid: options.user?.uid,
      gid: options.user?.gid,
    });
  } catch (e) {
    closeFd(w);
    throw new SynplugError(`cannot start /bin/sh to run the command: ${(e as Error).message}; the command was not run`, 'command-not-started', { cause: e });
  } finally {
    for (const fd of restore) setCloseOnExec(fd, false);
    closeFd(r);
  }
  let gateFd = w;
  const closeGate = () => {
    if (gateFd < 0) return;
    closeFd(gateFd);
    gateFd = -1;
  };
  const exited = new Promise<{ code: number; signal: NodeJS.Signals | null; at: bigint }>((resolve) => {
    child.on('exit', (code, signal) => {
      const at = process.hrtime.bigint();
      closeGate();
      resolve({ code: code ?? 128 + signalNumber(signal), signal, at });
    });
  });
  return new Promise((resolve, reject) => {
    child.once('error', (e) => {
      closeGate();
      reject(new SynplugError(`cannot start /bin/sh to run the command: ${e.message}; the command was not run`, 'command-not-started', { cause: e }));
    });
    child.once('spawn', () =>
      resolve({
        child,
        open: () => {
          // EPIPE (the shell died, SIGPIPE is ignored by Node) is reported through `exited`
          if (gateFd >= 0) libc('write')(gateFd, GATE_BYTE, 1);
        },
        close: closeGate,
        abort: closeGate,
        exited,
      }),
    );
  });
}

/** The byte that opens the gate (`read` takes the line). */
const GATE_BYTE = Buffer.from('\n');

/**
 * pipe2(O_CLOEXEC): neither end leaks into a program synplug starts (spawn
 * dup2()s the read end onto the shell's fd 3, which clears the flag there).
 * @throws {SynplugError} `command-not-started`: pipe2 failed (EMFILE...); nothing was run
 */
function gatePipe(): { r: number; w: number } {
  const fds = Buffer.alloc(8);
  if (libc('pipe2')(fds, SOCK_CLOEXEC) !== 0) {
    throw new SynplugError(`cannot make the command's gate pipe: pipe2 failed: ${errnoName(lastErrno())}; the command was not run`, 'command-not-started');
  }
  return { r: fds.readInt32LE(0), w: fds.readInt32LE(4) };
}

/**
 * Set FD_CLOEXEC on every open descriptor above 2 of this process that lacks it
 * (listed in /proc/self/fd; one closed meanwhile is skipped).
 * @returns the descriptors changed, to clear the flag on again
 */
function closeOnExecAbove2(): number[] {
  const changed: number[] = [];
  let fds: number[];
  try {
    fds = readdirSync('/proc/self/fd')
      .map(Number)
      .filter((fd) => Number.isInteger(fd) && fd > 2);
  } catch {
    return changed; // no /proc: nothing to tell
  }
  for (const fd of fds) {
    try {
      if (isCloseOnExec(fd)) continue;
      setCloseOnExec(fd, true);
      changed.push(fd);
    } catch {
      /* closed since it was listed (the listing's own descriptor) */
    }
  }
  return changed;
}

function closeFd(fd: number): void {
  libc('close')(fd);
}

function signalNumber(s: NodeJS.Signals | null): number {
  return s ? ((osConstants.signals as Record<string, number>)[s] ?? 0) : 0;
}
