/**
 * `socket cgroupv2` ids to paths, as nft 1.0.6 finds them (its
 * cgroupv2_get_path): depth first under a root, the first entry whose inode
 * (readdir's d_ino, the entry's own: a link's, not its target's) is the id,
 * file or directory; links to directories are descended into. No kernel: a
 * tree in a temporary directory.
 */
import test from 'ava';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupPaths } from '../../src/iptables/ruleset.js';

const root = mkdtempSync(join(tmpdir(), 'synplug-cg-'));
test.after.always(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, 'a/b/c'), { recursive: true });
writeFileSync(join(root, 'a/b/cgroup.procs'), '');
mkdirSync(join(root, 'd'));
// a link in a tree of its own: the walk descends into it too, so a/b/c would have two paths here, found in directory order
mkdirSync(join(root, 'l/x'), { recursive: true });
symlinkSync('x', join(root, 'l/ln'));
const ino = (p: string): string => lstatSync(join(root, p), { bigint: true }).ino.toString();

test('directories and files at any depth are found by their inode, paths relative to the root', (t) => {
  t.deepEqual(cgroupPaths(new Set([ino('a/b/c'), ino('a/b/cgroup.procs'), ino('d')]), join(root, '.')), {
    [ino('a/b/c')]: 'a/b/c',
    [ino('a/b/cgroup.procs')]: 'a/b/cgroup.procs',
    [ino('d')]: 'd',
  });
});

test("a link matches by its own inode (readdir's d_ino), not its target's", (t) => {
  t.deepEqual(cgroupPaths(new Set([ino('l/ln')]), join(root, 'l')), { [ino('l/ln')]: 'ln' });
  t.deepEqual(cgroupPaths(new Set([ino('l/x')]), join(root, 'l')), { [ino('l/x')]: 'x' });
});

test('an id nothing under the root has, and the root itself, are left out (nft prints the number)', (t) => {
  t.deepEqual(cgroupPaths(new Set([ino('.'), '18446744073709551615']), root), {});
  t.deepEqual(cgroupPaths(new Set(['5']), join(root, 'missing')), {});
});
