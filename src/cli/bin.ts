#!/usr/bin/env node
/**
 * The `synplug` executable: runs {@link main} on the process's argv.
 * @module
 */
import { main } from './main.js';
import { watchOutput } from './output.js';

watchOutput();
main(process.argv).then((code) => {
  process.exitCode = code;
});
