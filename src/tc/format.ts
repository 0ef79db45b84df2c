/**
 * Text output close to `tc [-s] [-d] qdisc|class|filter show`.
 *
 * Each function prints one entry, ending with a newline, the way tc's
 * print_qdisc / print_class / print_filter do (trailing spaces included).
 *
 * @module
 */
import { TC_H_CLSACT, TC_H_MAKE, TC_H_MIN_EGRESS, TC_H_MIN_INGRESS, TC_H_ROOT } from './constants.js';
import { parseFilterParent, parseHandle } from './handle.js';
import { filterKind, qdiscKind } from './registry.js';
import { formatStats } from './stats.js';
import type { ClassEntry, FilterEntry, QdiscEntry } from './types.js';

/** Options of the text formatters. */
export interface FormatOptions {
  /** print the stats lines (tc -s) */
  stats?: boolean;
  /** print details (tc -d) where a kind has them */
  details?: boolean;
  /** print `dev NAME` (tc does when no device was given) */
  showDev?: boolean;
  /**
   * filters: the parent the listing asked for (`tc filter show dev X
   * ingress`), as text ("ingress", "ffff:") or a u32: tc leaves the parent
   * out of each line whose parent is that one (and prints it where the
   * kernel reports another, e.g. ffff:fff1 when "ffff:" was asked). `true`
   * leaves it out of every line.
   */
  omitParent?: boolean | string | number;
}

function devText(e: { dev?: string; ifindex: number }, o: FormatOptions): string {
  return o.showDev ? `dev ${e.dev ?? `if${e.ifindex}`} ` : '';
}

function statsText(e: Record<string, unknown>, xstats: string): string {
  let s = '';
  const st = formatStats(e);
  if (st) s += `${st}\n`;
  if (xstats) s += `${xstats}\n`;
  return s;
}

/**
 * One qdisc as tc prints it, e.g.
 * ```
 * qdisc prio 1: root refcnt 2 bands 4 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
 *  Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)
 *  backlog 74b 1p requeues 0
 * ```
 * Options of a kind this library does not know print as `options <hex>`.
 */
export function formatQdiscText(e: QdiscEntry, o: FormatOptions = {}): string {
  const desc = e.kind === undefined ? undefined : qdiscKind(e.kind);
  let s = `qdisc ${e.kind ?? '?'} ${e.handle} ${devText(e, o)}`;
  if (e.root) s += 'root ';
  else if (e.parent !== undefined) s += `parent ${e.parent} `;
  if (e.refcnt !== undefined) s += `refcnt ${e.refcnt} `;
  if (e.offloaded) s += 'offloaded ';
  if (e.ingress_block) s += `ingress_block ${e.ingress_block} `;
  if (e.egress_block) s += `egress_block ${e.egress_block} `;
  if (desc?.formatOptions) s += desc.formatOptions(e.options, o.details);
  else if (e.options.raw !== undefined) s += `options ${e.options.raw} `;
  s += '\n';
  if (o.stats) s += statsText(e, desc?.formatXstats ? desc.formatXstats(e, false) : '');
  return s;
}

/**
 * One class as tc prints it, e.g. `class htb 1:20 parent 1:1 leaf 20: prio 3 rate 1Mbit ...`
 * (tc 6.1 prints class lists only as text, even with -j).
 */
export function formatClassText(e: ClassEntry, o: FormatOptions = {}): string {
  const desc = e.kind === undefined ? undefined : qdiscKind(e.kind);
  let s = `class ${e.kind ?? '?'} ${e.handle} ${devText(e, o)}`;
  if (e.root) s += 'root ';
  else s += `parent ${e.parent} `;
  if (e.leaf !== undefined) s += `leaf ${e.leaf} `;
  if (desc?.formatClassOptions) s += desc.formatClassOptions(e.options, o.details);
  else if (e.options.raw !== undefined) s += `options ${e.options.raw} `;
  s += '\n';
  if (o.stats) s += statsText(e, desc?.formatXstats ? desc.formatXstats(e, true) : '');
  return s;
}

/** Whether the filter's parent is the one the listing asked for (see {@link FormatOptions.omitParent}). */
function omitsParent(e: FilterEntry, asked: FormatOptions['omitParent']): boolean {
  if (asked === undefined || asked === false) return false;
  if (asked === true) return true;
  let want: number;
  try {
    want = parseFilterParent(asked);
  } catch {
    return false;
  }
  const have = e.root
    ? TC_H_ROOT
    : e.ingress
      ? TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
      : e.egress
        ? TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
        : e.parent !== undefined
          ? parseHandle(e.parent)
          : undefined;
  return have === want;
}

/**
 * One filter as tc prints it, e.g.
 * `filter parent 1: protocol ip pref 1 fw chain 0 handle 0x1 classid 1:4 `.
 */
export function formatFilterText(e: FilterEntry, o: FormatOptions = {}): string {
  const desc = e.kind === undefined ? undefined : filterKind(e.kind);
  let s = 'filter ';
  if (e.block !== undefined) s += `block ${e.block} `;
  else {
    s += devText(e, o);
    if (omitsParent(e, o.omitParent)) {
      /* tc prints the parent only when it is not the one asked for */
    } else if (e.root) s += 'root ';
    else if (e.ingress) s += 'ingress ';
    else if (e.egress) s += 'egress ';
    else s += `parent ${e.parent} `;
  }
  if (e.protocol !== undefined) s += `protocol ${e.protocol} `;
  if (e.pref !== undefined) s += `pref ${e.pref} `;
  if (e.kind !== undefined) s += `${e.kind} `;
  if (e.chain !== undefined) s += `chain ${e.chain} `;
  if (e.options) {
    if (desc?.formatOptions) s += desc.formatOptions(e.options);
    else if (e.options.raw !== undefined) s += `options ${e.options.raw} `;
  }
  s += '\n';
  if (o.stats) {
    const st = formatStats(e);
    if (st) s += `${st}\n`;
  }
  return s;
}

/** Output chunks are about this size, characters: few large writes, never one string of a whole large listing. */
const CHUNK = 1 << 20;

/**
 * The output of a tc listing (`synplug show qdisc|class|filter`), built while
 * the dump is read: JSON text in batches (one JSON.stringify per 256 entries)
 * or the text of {@link formatQdiscText} and the like, so that the entries
 * are dropped as soon as they are printed into it. When the kernel flags a
 * dump inconsistent and it runs again (a new `attempt`, see `eachClass`),
 * what was built is dropped. {@link ListingOutput.write} hands it out in
 * chunks of about 1 MiB.
 *
 * The JSON is one array, `[` entry `,` entry ... `]` and a newline, exactly
 * as `JSON.stringify(entries)` would print it; text entries are concatenated
 * with a newline added at the end when the last one lacks it.
 */
export class ListingOutput<E> {
  private parts: string[] = [];
  private batch: E[] = [];
  private attempt = 1;
  /**
   * @param json JSON (true) or text
   * @param text an entry's text, for text output
   */
  constructor(
    private readonly json: boolean,
    private readonly text: (e: E) => string,
  ) {}

  /** Add one entry of dump attempt `attempt` (a bound function: pass it to eachClass as is). */
  add = (e: E, attempt: number): void => {
    if (attempt !== this.attempt) {
      this.parts = [];
      this.batch = [];
      this.attempt = attempt;
    }
    if (!this.json) {
      this.parts.push(this.text(e));
      return;
    }
    this.batch.push(e);
    if (this.batch.length === 256) this.flush();
  };

  private flush(): void {
    if (this.batch.length === 0) return;
    const j = JSON.stringify(this.batch);
    this.parts.push(j.slice(1, -1));
    this.batch = [];
  }

  /**
   * Hand the whole output to `sink`, in chunks (each a string of about 1 MiB
   * or less; their concatenation is the output).
   */
  write(sink: (chunk: string) => void): void {
    let chunk = '';
    const put = (s: string) => {
      chunk += s;
      if (chunk.length >= CHUNK) {
        sink(chunk);
        chunk = '';
      }
    };
    if (!this.json) {
      for (const p of this.parts) if (p) put(p);
      const last = this.parts[this.parts.length - 1];
      if (last && !last.endsWith('\n')) put('\n');
    } else {
      this.flush();
      put('[');
      for (let i = 0; i < this.parts.length; i++) put(i ? `,${this.parts[i]}` : this.parts[i]);
      put(']\n');
    }
    if (chunk) sink(chunk);
  }
}
