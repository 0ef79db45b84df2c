/**
 * tc handles: parsed and printed the way iproute2's `tc` does.
 *
 * A handle is a u32 `major:minor` (16 bits each, printed in hex) from
 * linux/pkt_sched.h (`TC_H_MAJ`, `TC_H_MIN`, `TC_H_ROOT`, `TC_H_INGRESS`...).
 * The public API takes and returns tc's text (`"1:"`, `"1:4"`, `"root"`)
 * and uses the u32 inside.
 *
 * | text                  | value          | parsed by                        |
 * |-----------------------|----------------|----------------------------------|
 * | `root`                | 0xFFFFFFFF     | {@link parseHandle}              |
 * | `none`                | 0              | both                             |
 * | `ingress`, `clsact`   | 0xFFFFFFF1     | {@link parseHandle} (a parent)   |
 * | `1:` / `1:0` / `1`    | 0x00010000     | {@link parseQdiscHandle}         |
 * | `1:4`                 | 0x00010004     | {@link parseHandle}              |
 * | `:4`                  | 0x00000004     | {@link parseHandle}              |
 * | `1` (no colon)        | 0x00000001     | {@link parseHandle} (as tc's get_tc_classid) |
 * | `0xffff0000`          | 0xFFFF0000     | {@link parseHandle}              |
 *
 * @module
 */
import { UsageError } from '../netlink/errors.js';
import { TC_H_ROOT, TC_H_UNSPEC, TC_H_INGRESS, TC_H_CLSACT, TC_H_MIN_INGRESS, TC_H_MIN_EGRESS, TC_H_MAKE } from './constants.js';

const HEX = /^(?:0x)?([0-9a-f]+)$/i;

function hexPart(part: string, max: number, text: string, what: string): number {
  const m = HEX.exec(part);
  if (!m) throw badHandle(text, what);
  // Strip leading zeros before the length check so "0001" is fine; reject absurd lengths early.
  const digits = m[1].replace(/^0+(?=.)/, '');
  if (digits.length > 8) throw badHandle(text, what, `${part} is larger than 0x${max.toString(16)}`);
  const v = parseInt(digits, 16);
  if (v > max) throw badHandle(text, what, `${part} is larger than 0x${max.toString(16)}`);
  return v;
}

function badHandle(text: string, what: string, why?: string): UsageError {
  const shown = JSON.stringify(text);
  return new UsageError(
    `invalid ${what} ${shown}${why ? `: ${why}` : ''}; expected tc syntax: hexadecimal MAJOR:MINOR (e.g. "1:", "1:4", "ffff:"), "root", "ingress", "clsact" or "none"`,
  );
}

/**
 * Parse a class id or a parent, as tc's `get_tc_classid` does, plus the
 * parent keywords `ingress` and `clsact` (both TC_H_INGRESS, 0xFFFFFFF1).
 *
 * @param text e.g. `"1:4"`, `"1:"`, `":4"`, `"root"`, `"none"`, `"ingress"`, `"0x10004"`
 * @param what what the text is, for the error message (default `"handle"`)
 * @returns the u32 handle
 * @throws {UsageError} anything else (bad hex, a part over 0xffff, an empty string, text after the minor)
 */
export function parseHandle(text: string, what = 'handle'): number {
  if (typeof text !== 'string') throw badHandle(String(text), what);
  const t = text.trim();
  switch (t) {
    case 'root':
      return TC_H_ROOT;
    case 'none':
      return TC_H_UNSPEC;
    case 'ingress':
      return TC_H_INGRESS;
    case 'clsact':
      return TC_H_CLSACT;
    default:
      break;
  }
  if (t === '') throw badHandle(text, what);
  const colon = t.indexOf(':');
  if (colon < 0) return hexPart(t, 0xffffffff, text, what) >>> 0; // tc: a bare number is the raw u32
  const majText = t.slice(0, colon);
  const minText = t.slice(colon + 1);
  if (minText.includes(':')) throw badHandle(text, what);
  const maj = majText === '' ? 0 : hexPart(majText, 0xffff, text, what);
  const min = minText === '' ? 0 : hexPart(minText, 0xffff, text, what);
  return TC_H_MAKE(maj << 16, min);
}

/**
 * Parse a qdisc handle (`handle 1:` in tc), as tc's `get_qdisc_handle`:
 * `"1:"`, `"1"`, `"1:0"` all mean 0x00010000; `"none"` means 0 (let the
 * kernel choose).
 *
 * Unlike tc, which ignores anything after the colon, a non-zero minor is
 * refused: a qdisc handle has none, and `"1:4"` is most likely a class id
 * given by mistake.
 *
 * @param text qdisc handle text
 * @param what what the text is, for the error message (default `"qdisc handle"`)
 * @returns the u32 handle (major << 16)
 * @throws {UsageError} bad hex, a major over 0xffff, or a non-zero minor
 */
export function parseQdiscHandle(text: string, what = 'qdisc handle'): number {
  if (typeof text !== 'string') throw badHandle(String(text), what);
  const t = text.trim();
  if (t === 'none') return TC_H_UNSPEC;
  if (t === '') throw badHandle(text, what);
  const colon = t.indexOf(':');
  const majText = colon < 0 ? t : t.slice(0, colon);
  const minText = colon < 0 ? '' : t.slice(colon + 1);
  if (majText === '') throw badHandle(text, what, 'a qdisc handle needs a major number');
  const maj = hexPart(majText, 0xffff, text, what);
  if (minText !== '' && hexPart(minText, 0xffff, text, what) !== 0) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(text)}: a qdisc handle has no minor number; write "${maj.toString(16)}:"`);
  }
  return (maj << 16) >>> 0;
}

/**
 * Parse the parent of a filter, as tc does: a qdisc or class id (`"1:"`,
 * `"1:4"`), `root`, the clsact hooks `ingress` (ffff:fff2, which the
 * `ingress` qdisc accepts as well) and `egress` (ffff:fff3), or the ingress
 * qdisc's own `"ffff:"` / `"ffff:fff1"`.
 * @param text the parent text; a number is taken as the u32 (see {@link toHandle})
 * @returns the u32 tcm_parent
 * @throws {UsageError} bad text, or a number that is not a u32
 */
export function parseFilterParent(text: string | number): number {
  if (typeof text === 'number') return toHandle(text, 'filter parent');
  const t = typeof text === 'string' ? text.trim() : text;
  if (t === 'ingress') return TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
  if (t === 'egress') return TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);
  return parseHandle(text, 'filter parent');
}

/**
 * A parent as the error sentences name it: `root`, `ingress` (TC_H_INGRESS,
 * ffff:fff1, and the clsact hook ffff:fff2), `egress` (ffff:fff3), else
 * tc's class id text.
 * @param p u32 tcm_parent
 */
export function parentText(p: number): string {
  p >>>= 0;
  if (p === TC_H_ROOT) return 'root';
  if (p === TC_H_INGRESS || p === TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)) return 'ingress';
  if (p === TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)) return 'egress';
  return formatHandle(p);
}

/**
 * Print a class id or parent as tc's `print_tc_classid`: `root`, `none`,
 * `:4`, `1:`, `1:4` (lowercase hex). TC_H_INGRESS prints `ffff:fff1`, as tc does.
 * @param h u32 handle
 */
export function formatHandle(h: number): string {
  h >>>= 0;
  if (h === TC_H_ROOT) return 'root';
  if (h === TC_H_UNSPEC) return 'none';
  const maj = h >>> 16;
  const min = h & 0xffff;
  if (maj === 0) return `:${min.toString(16)}`;
  if (min === 0) return `${maj.toString(16)}:`;
  return `${maj.toString(16)}:${min.toString(16)}`;
}

/**
 * Print a qdisc's own handle as `tc qdisc show` does: the major only,
 * `"1:"`; 0 prints `"0:"` (as for noqueue and pfifo_fast).
 * @param h u32 handle
 */
export function formatQdiscHandle(h: number): string {
  return `${(h >>> 16).toString(16)}:`;
}

/**
 * Accept a handle given as tc text or as a u32 number.
 * @throws {UsageError} bad text, or a number that is not a u32
 */
export function toHandle(h: string | number, what = 'handle'): number {
  if (typeof h === 'number') {
    if (!Number.isInteger(h) || h < 0 || h > 0xffffffff) throw new UsageError(`invalid ${what} ${h}: not a u32`);
    return h >>> 0;
  }
  return parseHandle(h, what);
}

/**
 * Accept a qdisc handle given as tc text or as a u32 number.
 * @throws {UsageError} bad text, a number that is not a u32, or a non-zero minor
 */
export function toQdiscHandle(h: string | number, what = 'qdisc handle'): number {
  if (typeof h === 'number') {
    if (!Number.isInteger(h) || h < 0 || h > 0xffffffff) throw new UsageError(`invalid ${what} ${h}: not a u32`);
    if (h & 0xffff) throw new UsageError(`invalid ${what} 0x${h.toString(16)}: a qdisc handle has no minor number`);
    return h >>> 0;
  }
  return parseQdiscHandle(h, what);
}

/*
 * Handle texts parsed once: a warm process sends the same few handles ("root",
 * "1:", "1:4") again and again, and parsing one costs more than the rest of a
 * request's encoding. Only successful parses are kept (the result does not
 * depend on `what`, which names the field in errors); bounded.
 */
const HANDLE_MEMO = new Map<string, number>();
const QDISC_HANDLE_MEMO = new Map<string, number>();
const FILTER_PARENT_MEMO = new Map<string, number>();
const MEMO_MAX = 256;

function memoized(memo: Map<string, number>, parse: (h: string, what: string) => number, h: string, what: string): number {
  let v = memo.get(h);
  if (v === undefined) {
    v = parse(h, what);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(h, v);
  }
  return v;
}

/**
 * {@link toHandle}, with text parses remembered (for the request builders).
 * @throws {UsageError} as {@link toHandle}
 */
export function handleOf(h: string | number, what: string): number {
  return typeof h === 'string' ? memoized(HANDLE_MEMO, parseHandle, h, what) : toHandle(h, what);
}

/**
 * {@link toQdiscHandle}, with text parses remembered.
 * @throws {UsageError} as {@link toQdiscHandle}
 */
export function qdiscHandleOf(h: string | number, what = 'qdisc handle'): number {
  return typeof h === 'string' ? memoized(QDISC_HANDLE_MEMO, parseQdiscHandle, h, what) : toQdiscHandle(h, what);
}

/**
 * {@link parseFilterParent}, with text parses remembered.
 * @throws {UsageError} as {@link parseFilterParent}
 */
export function filterParentOf(p: string | number): number {
  return typeof p === 'string' ? memoized(FILTER_PARENT_MEMO, (t) => parseFilterParent(t), p, 'filter parent') : parseFilterParent(p);
}
