#!/usr/bin/env node
/**
 * The `synplug` executable: runs {@link main} on the process's argv.
 * @module
 */
import { main } from './main.js';

// A closed pipe on stdout (`synplug show qdisc | head`) ends the output, not the program with a stack trace.
// Any other failure to write (ENOSPC on /dev/full...) is reported and ends the
// program; it is never rethrown, since a throw while a netlink reply is being
// handled would abort the process from inside the native socket's callback.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  try {
    process.stderr.write(`synplug: cannot write to stdout: ${e.code ?? e.message}\n`);
  } catch {
    /* nothing left to tell */
  }
  process.exit(1);
});
process.stderr.on('error', () => {
  /* nowhere to report it */
});
main(process.argv).then((code) => {
  process.exitCode = code;
});
