/**
 * `synplug show ...` (what tc, ip and nft show, for containers that have none
 * of them) and `synplug decode FILE`.
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { getSystemErrorMap } from 'node:util';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../netlink/message.js';
import { UsageError, SynplugError } from '../netlink/errors.js';
import type { NetlinkConnection } from '../netlink/connection.js';
import type { ClassEntry, FilterEntry, QdiscEntry } from '../tc/types.js';
import { jsonOption, oneOf, reportError, run } from './run.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';

const OBJECTS = ['qdisc', 'class', 'filter', 'link', 'addr', 'ruleset'] as const;

// Implementations are loaded when a command runs: start-up stays small.
async function withConn<T>(protocol: number, f: (c: NetlinkConnection) => Promise<T>): Promise<T> {
  const { NetlinkConnection } = await import('../netlink/connection.js');
  // Dumps go out on the connection's own 64 KiB-read dump socket (SocketTransport).
  const c = NetlinkConnection.open(protocol);
  try {
    return await f(c);
  } finally {
    c.close();
  }
}

function print(text: string): void {
  if (text) process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

/** Where a tc listing's output goes (ListingOutput.write). */
const toStdout = (chunk: string): void => {
  process.stdout.write(chunk);
};

/** The most `decode` reads, bytes: captures are small; a stream without end is refused, not swallowed. */
const MAX_INPUT = 256 * 1024 * 1024;

/** Read a file descriptor to its end, refusing more than MAX_INPUT bytes. */
function readCapped(fd: number, what: string): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(1 << 20);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      if ((e as NodeJS.ErrnoException).code === 'EOF') break;
      throw new UsageError(`cannot read ${what}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (n === 0) break;
    total += n;
    if (total > MAX_INPUT) throw new UsageError(`${what} holds more than ${MAX_INPUT} bytes; decode reads at most that much`);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}

/**
 * Lines to stdout, written in chunks of about 64 KiB with write(2) on fd 1
 * directly: a pipe whose reader is slower than the decoder then holds the
 * decoder back (process.stdout would queue every line in memory instead: a
 * 64 MB capture took 1.9 GB through a pipe).
 */
class LineOutput {
  private lines: string[] = [];
  private size = 0;
  /** Add one line (without its newline). */
  line(text: string): void {
    this.lines.push(text);
    this.size += text.length + 1;
    if (this.size >= 1 << 16) this.flush();
  }
  /** Write what is pending, all of it, before returning. */
  flush(): void {
    if (!this.lines.length) return;
    const data = Buffer.from(this.lines.join('\n') + '\n');
    this.lines = [];
    this.size = 0;
    writeAllSync(1, data);
  }
}

/** A 4-byte shared buffer to sleep on (Atomics.wait) while a non-blocking pipe is full. */
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Write all of `data` to `fd`, waiting while a non-blocking pipe is full
 * (EAGAIN: 1 ms sleeps). A reader that went away (EPIPE: `decode x | head`)
 * ends the program quietly, as bin.ts does for process.stdout.
 * @throws {SynplugError} (`failure`) the write failed otherwise (ENOSPC...)
 */
function writeAllSync(fd: number, data: Buffer): void {
  for (let off = 0; off < data.length; ) {
    try {
      off += writeSync(fd, data, off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      if (code !== 'EAGAIN') throw new SynplugError(`cannot write to stdout: ${code ?? (e as Error).message}`, 'failure', { cause: e });
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

/** Register `show` and `decode`. */
/**
 * Why `path` cannot be opened for reading, in strerror's words as a C program would print them (`No such file
 * or directory`), or undefined when it opens.
 */
function unopenable(path: string): string | undefined {
  try {
    closeSync(openSync(path, 'r'));
    return undefined;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // libuv's message is strerror's, lowercased first: `no such file or directory`
    const text = err.errno !== undefined ? getSystemErrorMap().get(err.errno)?.[1] : undefined;
    return text ? text[0].toUpperCase() + text.slice(1) : (err.code ?? String(e));
  }
}

export function showCommands(program: Command): void {
  program
    .command('show')
    .description('show qdiscs, classes, filters (as tc), links, addresses (as ip), or the nftables ruleset (as nft)')
    .argument('<object>', `one of: ${OBJECTS.join(', ')}`)
    .option('--dev <name>', 'only this device (class, filter: required)')
    .option('-s, --stats', 'with counters (tc -s)')
    .option('-d, --details', 'link: kind and details, as ip -d link show')
    .option('--parent <parent>', 'filter: only those at ingress, egress, root, 1:4...')
    .addOption(jsonOption())
    .addHelpText('after', exitCodesHelp('show'))
    .action(
      run(async (object: string, given: { dev?: string; stats?: boolean; details?: boolean; parent?: string; json?: boolean }) => {
        // flags not given are false (their help shows no "default: false")
        const f = { ...given, stats: given.stats === true, details: given.details === true };
        oneOf(object, OBJECTS, 'object');
        if (f.details && object !== 'link') throw new UsageError(`show ${object}: --details applies to links only`);
        if (f.parent !== undefined && object !== 'filter') throw new UsageError(`show ${object}: --parent applies to filters only`);
        if ((object === 'class' || object === 'filter') && f.dev === undefined)
          throw new UsageError(`show ${object} needs --dev NAME (the kernel lists ${object === 'class' ? 'classes' : 'filters'} per device)`);
        // Counters are decoded for tc objects only; refused rather than silently left out.
        if (f.stats && (object === 'link' || object === 'addr' || object === 'ruleset'))
          throw new UsageError(`show ${object}: --stats is not supported (counters are shown for qdisc, class and filter)`);
        if (f.dev !== undefined && object === 'ruleset') throw new UsageError('show ruleset: --dev does not apply (the ruleset is not per device)');
        if (object === 'ruleset') {
          const [{ listRuleset }, { formatRulesetText, formatRulesetJson }, { requireNetAdmin }, { XT_CONNLABEL_CONF }] = await Promise.all([
            import('../iptables/ruleset.js'),
            import('../iptables/format.js'),
            import('../guard/support.js'),
            import('../iptables/xt.js'),
          ]);
          requireNetAdmin('show ruleset'); // nftables refuses even to list without it
          const rs = await withConn(NETLINK_NETFILTER, (c) => listRuleset(c));
          const problems: string[] = [];
          if (f.json) print(JSON.stringify(formatRulesetJson(rs, { problems })));
          else {
            // nft's warnings go to stderr, each just before its table
            const warnings: Array<{ at: number; text: string }> = [];
            const text = formatRulesetText(rs, { problems, warnings, connlabelConfError: unopenable(XT_CONNLABEL_CONF) });
            let at = 0;
            for (const w of warnings) {
              process.stdout.write(text.slice(at, w.at));
              process.stderr.write(`${w.text}\n`);
              at = w.at;
            }
            print(text.slice(at));
          }
          // printed all the same, marked; but never exit 0 with a listing nft would read differently.
          // The message goes to stderr only: stdout holds the one listing (with --json, one JSON
          // document, as nft -j writes), not an error object after it.
          if (problems.length)
            return reportError(
              new SynplugError(
                `show ruleset: ${problems.length} part(s) of the ruleset cannot be printed in nft's language (raw ones marked ${f.json ? '{"raw": ...}' : '[ raw: ... ]'} above):\n  ${problems.join('\n  ')}`,
                'unprintable',
              ),
              false,
            );
          return EXIT.OK;
        }
        await withConn(NETLINK_ROUTE, async (c) => {
          const dev = f.dev;
          switch (object) {
            // tc listings can hold tens of thousands of entries: printed as they are decoded (ListingOutput)
            case 'qdisc': {
              const [{ eachQdisc }, { formatQdiscText, ListingOutput }] = await Promise.all([import('../tc/qdisc.js'), import('../tc/format.js')]);
              const out = new ListingOutput(Boolean(f.json), (q: QdiscEntry) => formatQdiscText(q, { stats: f.stats, showDev: dev === undefined }));
              await eachQdisc(c, { dev, stats: f.stats }, out.add);
              out.write(toStdout);
              return;
            }
            case 'class': {
              const [{ eachClass }, { formatClassText, ListingOutput }] = await Promise.all([import('../tc/class.js'), import('../tc/format.js')]);
              const out = new ListingOutput(Boolean(f.json), (x: ClassEntry) => formatClassText(x, { stats: f.stats }));
              await eachClass(c, { dev, stats: f.stats }, out.add);
              out.write(toStdout);
              return;
            }
            case 'filter': {
              const [{ eachFilter }, { formatFilterText, ListingOutput }, { nameActionDevices }, { listRawLinks }] = await Promise.all([
                import('../tc/filter.js'),
                import('../tc/format.js'),
                import('../tc/actions/list.js'),
                import('../netlink/route/link.js'),
              ]);
              // mirred actions carry the target's ifindex: named as tc names them, from one link dump
              const names = new Map((await listRawLinks(c)).map((l) => [l.index, l.ifname]));
              const parent = f.parent;
              const out = new ListingOutput(Boolean(f.json), (x: FilterEntry) => formatFilterText(x, { stats: f.stats, omitParent: parent }));
              await eachFilter(c, { dev, stats: f.stats, ...(parent !== undefined && { parent }) }, (x, attempt) =>
                out.add(nameActionDevices([x], (i) => names.get(i))[0], attempt),
              );
              out.write(toStdout);
              return;
            }
            case 'link': {
              const { getLinkByName, listLinks, formatLink } = await import('../netlink/route/link.js');
              const options = { details: f.details };
              const list = dev !== undefined ? [await getLinkByName(c, dev, options)] : await listLinks(c, options);
              if (f.json) print(JSON.stringify(list));
              else print(list.map((l) => formatLink(l)).join('\n'));
              return;
            }
            case 'addr': {
              const { showAddresses, formatAddrShow } = await import('../netlink/route/addr.js');
              const list = await showAddresses(c, { dev });
              if (f.json) print(JSON.stringify(list));
              else print(formatAddrShow(list));
              return;
            }
          }
        });
        return EXIT.OK;
      }),
    );

  program
    .command('decode')
    .description('decode captured netlink traffic: an nlmon pcap/pcapng, a capture.json, or a hex dump; "-" reads stdin')
    .argument('<file>', 'capture file, or - for stdin')
    .addOption(new Option('--protocol <n>', "a hex dump's: 0 route, 4 sock_diag, 12 netfilter").default('0', '0'))
    .addOption(new Option('--json', 'an error as JSON on stdout too'))
    .addHelpText('after', exitCodesHelp('decode'))
    .action(
      run(async (file: string, f: { protocol: string }) => {
        const protocol = Number(f.protocol);
        if (f.protocol.trim() === '' || !Number.isInteger(protocol) || protocol < 0 || protocol > 31)
          throw new UsageError(`--protocol: '${f.protocol}' is not a netlink protocol number (0-31)`);
        const [{ captureDatagrams }, { eachCapturedMessage }] = await Promise.all([
          import('../netlink/pcap.js'),
          import('../netlink/describe.js'),
          // every module that registers body decoders
          import('../netlink/route/index.js'),
          import('../netlink/sockdiag.js'),
          import('../tc/index.js'),
          import('../iptables/index.js'),
        ]);
        let datagrams: ReturnType<typeof captureDatagrams>;
        if (file === '-') {
          datagrams = captureDatagrams(readCapped(0, 'standard input'), { protocol });
        } else {
          let st: ReturnType<typeof statSync>;
          try {
            st = statSync(file);
          } catch (e) {
            throw new UsageError(`cannot read '${file}': ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
          }
          if (!st.isFile()) throw new UsageError(`'${file}' is not a regular file (use - and a pipe for streams)`);
          if (st.size > MAX_INPUT) throw new UsageError(`'${file}' is ${st.size} bytes; decode reads at most ${MAX_INPUT} (split the capture)`);
          datagrams = captureDatagrams(file, { protocol });
        }
        // Each message is printed as it is read (in writes of about 64 KiB): a datagram of millions of
        // messages is never held as objects or text at once. When the input goes bad part-way, everything
        // before the bad bytes is printed before the error.
        const out = new LineOutput();
        let index = 0;
        try {
          for (const d of datagrams) {
            const trailing = eachCapturedMessage(d.protocol, d.bytes, d.direction, (m) =>
              out.line(JSON.stringify({ datagram: index, direction: d.direction, ...m })),
            );
            // bytes of a request past what the kernel reads (iproute2's padding...): noted, not an error
            if (trailing) out.line(JSON.stringify({ datagram: index, direction: d.direction, trailing }));
            index++;
          }
        } finally {
          out.flush();
        }
        if (index === 0) throw new SynplugError(`'${file}' holds no netlink datagram`, 'decode');
      }),
    );
}
