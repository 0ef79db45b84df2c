/**
 * The unit tier touches no kernel (CONTRIBUTING.md, Tests): loaded in every
 * ava worker (package.json's `ava.require`), this makes a test file under
 * `test/unit/` fail when it opens a real netlink socket. It wraps libc's
 * bind() as koffi binds it (src/netlink/libc.ts): binding a netlink socket
 * (struct sockaddr_nl, nl_family AF_NETLINK), which every netlink
 * conversation starts with (src/netlink/transport.ts), throws in a unit test
 * file; a socket made only to read its namespace's cookie
 * (netns.ts's netnsCookie: no message sent) is allowed. The error is thrown again
 * uncaught, so that code catching the first (a report that says "not
 * counted") cannot hide it. Other tiers (live, kernel) are left alone.
 *
 * Which file the worker runs comes from ava's worker options (ava is pinned
 * in package.json); if that cannot be read, every test file fails loudly
 * rather than the guard going silently missing.
 */
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const AF_NETLINK = 16;
const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The test file this ava worker runs (absolute path). */
function testFile(): string {
  const options = require(join(dirname(require.resolve('ava')), '..', 'lib', 'worker', 'options.cjs')) as { get(): { file: string } };
  const file = options.get().file;
  return file.startsWith('file:') ? fileURLToPath(file) : file;
}

interface KoffiLib {
  func(declaration: string, ...rest: unknown[]): (...args: unknown[]) => unknown;
}

export default function noKernelInUnitTests(): void {
  const file = testFile();
  const rel = relative(root, file);
  if (!rel.startsWith(`test${sep}unit${sep}`)) return;
  const koffi = require('koffi') as { load(...args: unknown[]): KoffiLib };
  const load = koffi.load;
  koffi.load = (...args) => {
    const lib = load.apply(koffi, args);
    // koffi's library object keeps func on a native prototype that ignores assignment: a wrapper over it
    const func = (declaration: string, ...rest: unknown[]) => {
      const f = lib.func(declaration, ...rest);
      if (!/^\s*int\s+bind\s*\(/.test(declaration)) return f;
      return (...a: unknown[]) => {
        if (Buffer.isBuffer(a[1]) && a[1].length >= 2 && a[1].readUInt16LE(0) === AF_NETLINK) {
          const e = new Error(
            `${rel}: a unit test opened a real netlink socket: the unit tier touches no kernel; give the code a FakeTransport (src/netlink/testing.ts), a FakeSession (test/helpers/fake-session.ts) or a seam, or move the test to test/live`,
          );
          setImmediate(() => {
            throw e;
          });
          throw e;
        }
        return f(...a);
      };
    };
    return Object.create(lib, { func: { value: func } }) as KoffiLib;
  };
}
