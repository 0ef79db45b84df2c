/**
 * Hex dumps of netlink datagrams, as people paste them: `synplug decode`
 * reads them through {@link readCaptureFile} (pcap.ts), which hands text
 * input here.
 *
 * Accepted forms (the text is read line by line):
 *
 * - **Plain hex**: hex digit pairs with any spacing, e.g.
 *   `30000000 12000100 2f700c6b ...` or `30 00 00 00 12 00 ...`. Tokens are
 *   separated by whitespace or commas; each may carry a `0x` prefix and must
 *   hold an even number of hex digits.
 * - **Offset lines** (`xxd`, `hexdump -C`, `0000: 01 02 ...`): a line whose
 *   first token is a hex offset followed by `:` (xxd, `0000:`), or a
 *   `hexdump -C` line (offset, hex bytes, then `|ascii|`). The offset is
 *   dropped, and so is a trailing ASCII column (`|...|`, or xxd's column
 *   after two or more spaces). An offset of 0 starts a new datagram; any
 *   other offset must equal the number of bytes read so far for the current
 *   datagram. A lone offset line (hexdump's final length line) is ignored.
 *   A `*` line (hexdump/xxd -a: "the line above repeats") is expanded up to
 *   the next offset.
 * - **Comments**: lines whose first non-blank character is `#` or that
 *   start with `//` are skipped (they neither add bytes nor split datagrams).
 *
 * - **`xxd -p`** (plain hex in lines of 60 digits): a line of exactly 60
 *   hex digits and nothing else (30 bytes: never a whole netlink datagram,
 *   whose length is a multiple of 4) continues on the next line, so a
 *   datagram `xxd -p` wrapped is read whole; it ends at its first shorter
 *   line. (A datagram of a multiple of 60 bytes ends on a full line: a
 *   blank line must follow it when another datagram follows.)
 *
 * Splitting into datagrams:
 *
 * - If a blank line appears between two data lines anywhere in the text,
 *   blank lines separate datagrams and the lines of one block are joined.
 * - Otherwise each plain-hex line is one datagram (one datagram per line),
 *   except that `xxd -p`'s full lines continue (above).
 * - Offset lines follow their offsets (offset 0 = new datagram), so a
 *   multi-line `xxd` dump of several datagrams needs no blank lines.
 *
 * @module
 */
import { NetlinkDecodeError } from './errors.js';

interface Line {
  /** text of the line, without its end-of-line */
  text: string;
  /** 1-based line number */
  no: number;
  /** byte offset of the line's start in the whole dump */
  at: number;
}

// Every pattern is bounded or linear: a line of megabytes (one datagram as
// one line of hex) is scanned without backtracking through it.
const COLON_OFFSET = /^\s*(?:0x)?([0-9a-fA-F]{1,16}):(?=\s|$)/;
const HEXDUMP_C = /^\s*([0-9a-fA-F]{4,16})\s+((?:[0-9a-fA-F]{2}\s+){0,15}[0-9a-fA-F]{2})\s+\|.*\|\s*$/;
/** hexdump -C lines are short: longer ones are not tried against {@link HEXDUMP_C}. */
const HEXDUMP_C_MAX = 120;
const LONE_OFFSET = /^\s*([0-9a-fA-F]{6,16})\s*$/;
/** A full line of `xxd -p` (30 bytes as 60 hex digits, nothing else): the datagram continues on the next line. */
const XXD_P_FULL_LINE = /^\s*[0-9a-fA-F]{60}\s*$/;

/** Whether the string is hex digit pairs and nothing else (a loop, not a pattern: tokens can be megabytes long). */
function isHexPairs(d: string): boolean {
  if (d.length === 0 || d.length % 2 !== 0) return false;
  for (let i = 0; i < d.length; i++) {
    const c = d.charCodeAt(i) | 0x20; // A-F as a-f
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * The hex digits of one token of digit pairs (an optional `0x` first).
 * @returns the digits, or undefined when the token is not such a run
 */
function hexToken(tok: string): string | undefined {
  const digits = tok.startsWith('0x') || tok.startsWith('0X') ? tok.slice(2) : tok;
  return isHexPairs(digits) ? digits : undefined;
}

/**
 * A dump read in pieces, for one too large to hold twice: `chunks()` reads
 * it from its start each time it is called (the dump is read in two
 * passes). A chunk may be reused by the reader once the next is asked for.
 */
export interface HexDumpChunks {
  /** the dump's length, bytes (sizes the buffer its datagrams are read into) */
  readonly size: number;
  /** the dump's bytes, in order, from the start */
  chunks(): Iterable<Buffer>;
}

/**
 * The lines of the dump, one at a time, each decoded from the bytes only
 * when reached: the dump is never held as one string, nor as an array of
 * lines, and when read in pieces, never whole.
 */
function* splitLines(chunks: Iterable<Buffer>): Generator<Line, void, undefined> {
  const line = (b: Buffer, no: number, at: number): Line => {
    const raw = b.toString('utf8');
    return { text: raw.endsWith('\r') ? raw.slice(0, -1) : raw, no, at };
  };
  let pending: Buffer[] = []; // the start of a line that runs past its chunk (copied: the chunk may be reused)
  let at = 0;
  let no = 1;
  for (const chunk of chunks) {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, nl);
      const b = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      yield line(b, no++, at);
      at += b.length + 1;
      from = nl + 1;
    }
    if (from < chunk.length) pending.push(Buffer.from(chunk.subarray(from)));
  }
  yield line(Buffer.concat(pending), no, at); // the last line (empty after a final newline)
}

/**
 * The bytes read, in one buffer that datagrams are views of: a dump holds
 * at most one byte per two characters (more only where `*` repeats lines),
 * so the buffer is sized once from the text and grows only for repeats.
 */
class Arena {
  private buf: Buffer;
  private start = 0;
  private end = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, size));
  }
  /** Bytes of the datagram being read. */
  get length(): number {
    return this.end - this.start;
  }
  /** Room for n more bytes: a repeat that ran past the estimate moves the datagram to a larger buffer (views already handed out keep the old one). */
  private reserve(n: number): void {
    if (this.end + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length, (this.length + n) * 2));
    this.buf.copy(next, 0, this.start, this.end);
    this.buf = next;
    this.end -= this.start;
    this.start = 0;
  }
  /** Append bytes to the datagram being read. */
  push(b: Buffer): void {
    this.reserve(b.length);
    b.copy(this.buf, this.end);
    this.end += b.length;
  }
  /** Append the bytes that runs of hex digit pairs spell, decoded straight into the buffer (no copy per line). */
  pushHex(runs: readonly string[]): number {
    let n = 0;
    for (const d of runs) {
      this.reserve(d.length / 2);
      const w = this.buf.write(d, this.end, 'hex');
      this.end += w;
      n += w;
    }
    return n;
  }
  /** End the datagram being read: its bytes (a view), or undefined when it has none. */
  take(): Buffer | undefined {
    const d = this.end > this.start ? this.buf.subarray(this.start, this.end) : undefined;
    this.start = this.end;
    return d;
  }
}

function isComment(s: string): boolean {
  const t = s.trimStart();
  return t.startsWith('#') || t.startsWith('//');
}

/**
 * The hex digits of the tokens of a piece of a line (separated by
 * whitespace or commas).
 * @returns one run of digits per token, or undefined when some token is not hex
 */
function hexTokens(s: string): string[] | undefined {
  const runs: string[] = [];
  for (const tok of s.split(/[\s,]+/)) {
    if (tok === '') continue;
    const d = hexToken(tok);
    if (d === undefined) return undefined;
    runs.push(d);
  }
  return runs;
}

/**
 * The bytes of an xxd-like line body (after the offset): hex groups, then
 * possibly an ASCII column after a run of two or more spaces.
 */
function offsetLineBytes(body: string, line: Line, bodyAt: number): Buffer {
  // Segments separated by runs of 2+ spaces; the first non-hex segment, or a
  // hex-looking tail exactly as long as the bytes before it (an ASCII column
  // of hex-looking characters), starts the ASCII column.
  const re = /\s{2,}/g;
  const starts: number[] = [0];
  for (let m = re.exec(body); m; m = re.exec(body)) starts.push(m.index + m[0].length);
  let bytes = Buffer.alloc(0);
  for (let i = 0; i < starts.length; i++) {
    const end = i + 1 < starts.length ? starts[i + 1] : body.length;
    const seg = body.slice(starts[i], end);
    const rest = body.slice(starts[i]);
    if (i > 0 && rest.length === bytes.length && rest.trim() !== '') break; // xxd's ASCII column
    const b = hexTokens(seg);
    if (b === undefined) {
      if (i === 0) {
        throw new NetlinkDecodeError(`hex dump line ${line.no}: not hex after the offset: ${JSON.stringify(seg.trim().slice(0, 40))}`, bodyAt + starts[i]);
      }
      break; // ASCII column
    }
    bytes = Buffer.concat([bytes, Buffer.from(b.join(''), 'hex')]);
  }
  return bytes;
}

/**
 * Parse a hex dump into datagrams (see the module documentation for the
 * accepted forms).
 * @param text the dump: text, its bytes (UTF-8), or a reader of its bytes in pieces
 * All or nothing; {@link hexDumpDatagrams} yields the datagrams before a bad line.
 * @returns one Buffer per datagram, in order; empty when the text holds no data
 * @throws {NetlinkDecodeError} a token that is not hex, an odd number of hex
 *   digits, or an offset that does not follow the bytes before it; `offset`
 *   is the byte offset of the bad line's start in the dump plus the column
 *   of the bad token in that line, and the message names the line
 */
export function parseHexDump(text: string | Buffer | HexDumpChunks): Buffer[] {
  return [...hexDumpDatagrams(text)];
}

/**
 * {@link parseHexDump}, one datagram at a time: each datagram is yielded as
 * soon as it is complete (its line read, in one-per-line form; the blank
 * line, offset-0 line or end that follows it, otherwise). At a bad line it
 * throws, after yielding every datagram completed before that line (a
 * datagram still being read there is dropped: its end is unknown).
 * @throws {NetlinkDecodeError} as {@link parseHexDump}
 */
export function* hexDumpDatagrams(dump: string | Buffer | HexDumpChunks): Generator<Buffer, void, undefined> {
  const whole = typeof dump === 'string' ? Buffer.from(dump, 'utf8') : Buffer.isBuffer(dump) ? dump : undefined;
  const src: HexDumpChunks = whole ? { size: whole.length, chunks: () => [whole] } : (dump as HexDumpChunks);
  const lines = function* (): Generator<Line, void, undefined> {
    for (const l of splitLines(src.chunks())) if (!isComment(l.text)) yield l;
  };
  // Block mode: a blank line sits between two data lines.
  let seenData = false;
  let blankAfterData = false;
  let blockMode = false;
  for (const l of lines()) {
    if (l.text.trim() === '') {
      if (seenData) blankAfterData = true;
      continue;
    }
    if (blankAfterData) {
      blockMode = true;
      break;
    }
    seenData = true;
  }

  const out: Buffer[] = [];
  const cur = new Arena(Math.ceil(src.size / 2));
  let curLen = 0;
  let curIsOffset = false;
  let lastLine: Buffer | undefined; // bytes of the last offset line, for `*`
  let repeat = false; // a `*` line: repeat lastLine up to the next offset
  let continues = false; // the last line was a full `xxd -p` line: the datagram goes on
  const flush = (): void => {
    const d = cur.take();
    if (d) out.push(d);
    curLen = 0;
    curIsOffset = false;
    lastLine = undefined;
    repeat = false;
    continues = false;
  };
  const fillRepeat = (upTo: number, l: Line): void => {
    if (!repeat) return;
    repeat = false;
    if (!lastLine || lastLine.length === 0 || upTo < curLen || (upTo - curLen) % lastLine.length !== 0) {
      throw new NetlinkDecodeError(`hex dump line ${l.no}: offset 0x${upTo.toString(16)} cannot follow a repeated ('*') line`, l.at);
    }
    while (curLen < upTo) add(lastLine);
  };
  const add = (b: Buffer): void => {
    cur.push(b);
    curLen += b.length;
  };

  /** Read one line; completed datagrams go to `out`. */
  const step = (l: Line): void => {
    const s = l.text;
    if (s.trim() === '') {
      flush();
      return;
    }
    if (s.trim() === '*' && curIsOffset) {
      repeat = true;
      return;
    }

    let offset: number | undefined;
    let bytes: Buffer;
    const colon = COLON_OFFSET.exec(s);
    const hd = colon || s.length > HEXDUMP_C_MAX ? null : HEXDUMP_C.exec(s);
    if (colon) {
      offset = parseInt(colon[1], 16);
      if (offset === 0) flush(); // a new datagram: the one before is complete, even if this line turns out bad
      const bodyAt = colon[0].length;
      bytes = offsetLineBytes(s.slice(bodyAt), l, l.at + bodyAt);
    } else if (hd) {
      offset = parseInt(hd[1], 16);
      if (offset === 0) flush();
      bytes = Buffer.from((hexTokens(hd[2]) ?? []).join(''), 'hex');
    } else if (curIsOffset && LONE_OFFSET.test(s)) {
      // hexdump's closing line: the total length. Check it, add nothing.
      const total = parseInt(s.trim(), 16);
      fillRepeat(total, l);
      if (total !== curLen) {
        throw new NetlinkDecodeError(`hex dump line ${l.no}: final offset 0x${total.toString(16)} does not match the ${curLen} bytes read`, l.at);
      }
      return;
    } else {
      const b = hexTokens(s);
      if (b === undefined) {
        const bad = s.split(/[\s,]+/).find((t) => t !== '' && hexToken(t) === undefined) ?? s.trim();
        const col = Math.max(0, s.indexOf(bad));
        throw new NetlinkDecodeError(`hex dump line ${l.no}: ${JSON.stringify(bad.slice(0, 40))} is not a run of hex byte pairs`, l.at + col);
      }
      if (curIsOffset) flush();
      if (!blockMode && !continues) flush();
      curLen += cur.pushHex(b);
      continues = XXD_P_FULL_LINE.test(s);
      if (!blockMode && !continues) flush();
      return;
    }

    if (offset === 0) {
      flush(); // a new datagram
    } else {
      if (!curIsOffset) {
        throw new NetlinkDecodeError(`hex dump line ${l.no}: the first line of a datagram must have offset 0, not 0x${offset.toString(16)}`, l.at);
      }
      fillRepeat(offset, l);
      if (offset !== curLen) {
        throw new NetlinkDecodeError(`hex dump line ${l.no}: offset 0x${offset.toString(16)} does not follow the ${curLen} bytes before it`, l.at);
      }
    }
    curIsOffset = true;
    add(bytes);
    lastLine = bytes;
  };
  for (const l of lines()) {
    try {
      step(l);
    } catch (e) {
      yield* out.splice(0); // the datagrams completed before the bad line
      throw e;
    }
    yield* out.splice(0);
  }
  flush();
  yield* out.splice(0);
}
