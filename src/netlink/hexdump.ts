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
  /** character offset of the line's start in the whole text */
  at: number;
}

const HEX_TOKEN = /^(?:0x)?((?:[0-9a-fA-F]{2})+)$/;
const COLON_OFFSET = /^\s*(?:0x)?([0-9a-fA-F]+):(?=\s|$)/;
const HEXDUMP_C = /^\s*([0-9a-fA-F]{4,})\s{1,}((?:[0-9a-fA-F]{2}\s+)*[0-9a-fA-F]{2})\s+\|.*\|\s*$/;
const LONE_OFFSET = /^\s*([0-9a-fA-F]{6,})\s*$/;
/** A full line of `xxd -p` (30 bytes as 60 hex digits, nothing else): the datagram continues on the next line. */
const XXD_P_FULL_LINE = /^\s*[0-9a-fA-F]{60}\s*$/;

/** The lines of the text, one at a time (a large dump is never held as an array of lines). */
function* splitLines(text: string): Generator<Line, void, undefined> {
  let at = 0;
  for (let no = 1; at <= text.length; no++) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const raw = text.slice(at, end);
    yield { text: raw.endsWith('\r') ? raw.slice(0, -1) : raw, no, at };
    at = end + 1;
  }
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
  /** Append bytes to the datagram being read. */
  push(b: Buffer): void {
    if (this.end + b.length > this.buf.length) {
      // a repeat ran past the estimate: the datagram moves to a larger buffer (views already handed out keep the old one)
      const next = Buffer.allocUnsafe(Math.max(this.buf.length, (this.length + b.length) * 2));
      this.buf.copy(next, 0, this.start, this.end);
      this.buf = next;
      this.end -= this.start;
      this.start = 0;
    }
    b.copy(this.buf, this.end);
    this.end += b.length;
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
 * Decode the hex tokens of a piece of a line.
 * @returns the bytes, or undefined when some token is not hex
 */
function hexTokens(s: string): Buffer | undefined {
  const parts: Buffer[] = [];
  for (const tok of s.split(/[\s,]+/)) {
    if (tok === '') continue;
    const m = HEX_TOKEN.exec(tok);
    if (!m) return undefined;
    parts.push(Buffer.from(m[1], 'hex'));
  }
  return Buffer.concat(parts);
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
    bytes = Buffer.concat([bytes, b]);
  }
  return bytes;
}

/**
 * Parse a hex dump into datagrams (see the module documentation for the
 * accepted forms).
 * @param text the dump
 * All or nothing; {@link hexDumpDatagrams} yields the datagrams before a bad line.
 * @returns one Buffer per datagram, in order; empty when the text holds no data
 * @throws {NetlinkDecodeError} a token that is not hex, an odd number of hex
 *   digits, or an offset that does not follow the bytes before it; `offset`
 *   is the character offset in `text`, and the message names the line
 */
export function parseHexDump(text: string): Buffer[] {
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
export function* hexDumpDatagrams(text: string): Generator<Buffer, void, undefined> {
  const lines = function* (): Generator<Line, void, undefined> {
    for (const l of splitLines(text)) if (!isComment(l.text)) yield l;
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
  const cur = new Arena(Math.ceil(text.length / 2));
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
    const hd = colon ? null : HEXDUMP_C.exec(s);
    if (colon) {
      offset = parseInt(colon[1], 16);
      if (offset === 0) flush(); // a new datagram: the one before is complete, even if this line turns out bad
      const bodyAt = colon[0].length;
      bytes = offsetLineBytes(s.slice(bodyAt), l, l.at + bodyAt);
    } else if (hd) {
      offset = parseInt(hd[1], 16);
      if (offset === 0) flush();
      bytes = hexTokens(hd[2]) ?? Buffer.alloc(0);
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
        const bad = s.split(/[\s,]+/).find((t) => t !== '' && !HEX_TOKEN.test(t)) ?? s.trim();
        const col = Math.max(0, s.indexOf(bad));
        throw new NetlinkDecodeError(`hex dump line ${l.no}: ${JSON.stringify(bad.slice(0, 40))} is not a run of hex byte pairs`, l.at + col);
      }
      if (curIsOffset) flush();
      if (!blockMode && !continues) flush();
      add(b);
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
