/**
 * Test helper: the real netlink traffic in fixtures/captures (see fixtures/README.md).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const CAPTURES_DIR = fileURLToPath(new URL('../../fixtures/captures/', import.meta.url));

export interface CapturedDatagram {
  protocol: number;
  direction: 'to-kernel' | 'from-kernel';
  bytes: Buffer;
  index: number;
}

export interface Capture {
  name: string;
  dir: string;
  command: string;
  exitStatus: number;
  printed: string;
  datagrams: CapturedDatagram[];
}

export function captureNames(): string[] {
  return readdirSync(CAPTURES_DIR)
    .filter((n) => !n.startsWith('.'))
    .sort();
}

export function loadCapture(name: string): Capture {
  const dir = join(CAPTURES_DIR, name);
  const j = JSON.parse(readFileSync(join(dir, 'capture.json'), 'utf8'));
  return {
    name,
    dir,
    command: j.command,
    exitStatus: j.exit_status,
    printed: j.printed,
    datagrams: j.datagrams.map((d: { protocol: number; direction: 'to-kernel' | 'from-kernel'; hex: string }, index: number) => ({
      protocol: d.protocol,
      direction: d.direction,
      bytes: Buffer.from(d.hex, 'hex'),
      index,
    })),
  };
}

/** The captured requests (to-kernel datagrams) of a capture. */
export function requests(c: Capture): CapturedDatagram[] {
  return c.datagrams.filter((d) => d.direction === 'to-kernel');
}

/** The captured replies (from-kernel datagrams) of a capture. */
export function replies(c: Capture): CapturedDatagram[] {
  return c.datagrams.filter((d) => d.direction === 'from-kernel');
}
