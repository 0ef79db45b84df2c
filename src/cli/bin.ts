#!/usr/bin/env node
/**
 * The `synplug` executable: runs {@link main} on the process's argv.
 * @module
 */
import { main } from './main.js';

// A closed pipe on stdout (`synplug show qdisc | head`) ends the output, not the program with a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
main(process.argv).then((code) => { process.exitCode = code; });
