/**
 * `synplug show ...` (what tc, ip and nft show, for containers that have none
 * of them) and `synplug decode FILE`.
 *
 * @module
 */
import { type Command, Option } from 'commander';
import { readSync, statSync } from 'node:fs';
import { NETLINK_NETFILTER, NETLINK_ROUTE } from '../netlink/message.js';
import { UsageError, SynplugError } from '../netlink/errors.js';
import type { NetlinkConnection } from '../netlink/connection.js';
import type { ClassEntry, FilterEntry, QdiscEntry } from '../tc/types.js';
import { jsonOption, oneOf, run } from './run.js';
import { exitCodesHelp } from './exit-codes.js';

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

/** Register `show` and `decode`. */
export function showCommands(program: Command): void {
  program
    .command('show')
    .description('show qdiscs, classes, filters (as tc), links, addresses (as ip), or the nftables ruleset (as nft)')
    .argument('<object>', `one of: ${OBJECTS.join(', ')}`)
    .option('--dev <name>', 'only this device (required for class and filter)')
    .option('-s, --stats', 'with counters (tc -s)', false)
    .option('-d, --details', "link: the kind (veth, ifb...), MTU range, queues and offload limits, as 'ip -d link show'", false)
    .option(
      '--parent <parent>',
      "filter: only the filters attached here, as 'tc filter show dev DEV ingress': ingress, egress (a clsact's hooks), root, or a qdisc or class handle such as 1: or 1:4",
    )
    .addOption(jsonOption())
    .addHelpText('after', `\nJSON output uses the field names of tc -j -s, ip -j and nft -j.\n${exitCodesHelp('show')}`)
    .action(
      run(async (object: string, f: { dev?: string; stats: boolean; details: boolean; parent?: string; json?: boolean }) => {
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
          const [{ listRuleset }, { formatRulesetText, formatRulesetJson }, { requireNetAdmin }] = await Promise.all([
            import('../iptables/ruleset.js'),
            import('../iptables/format.js'),
            import('../guard/support.js'),
          ]);
          requireNetAdmin('synplug show ruleset'); // nftables refuses even to list without it
          const rs = await withConn(NETLINK_NETFILTER, (c) => listRuleset(c));
          const problems: string[] = [];
          if (f.json) print(JSON.stringify(formatRulesetJson(rs, { problems })));
          else print(formatRulesetText(rs, { problems }));
          // printed all the same, marked; but never exit 0 with a listing nft would read differently
          if (problems.length)
            throw new SynplugError(
              `show ruleset: ${problems.length} part(s) of the ruleset cannot be printed in nft's language (marked ${f.json ? '{"raw": ...}' : '[ raw: ... ]'} above):\n  ${problems.join('\n  ')}`,
              'unprintable',
            );
          return;
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
      }),
    );

  program
    .command('decode')
    .description('decode captured netlink traffic: an nlmon pcap/pcapng, a capture.json, or a hex dump; "-" reads stdin')
    .argument('<file>', 'capture file, or - for stdin')
    .addOption(new Option('--protocol <n>', 'netlink protocol of a hex dump (0 route, 4 sock_diag, 12 netfilter); pcap files carry their own').default('0'))
    .addOption(new Option('--json', 'also report an error as a JSON object on stdout (the messages are always JSON)'))
    .addHelpText(
      'after',
      `
Prints one JSON object per netlink message (one per line): protocol, type, flags, seq, pid, and the decoded body
(tc -j / ip -j / nft field names) or the error (errno, code, extended-ack text).
When the input goes bad part-way, every datagram before the bad bytes is printed first, then the error.
A request is read as the kernel reads it: bytes it would not read (padding past nlmsg_len, a short tail, a header
with nlmsg_len below 16 or past the end) print as one {"trailing": {offset, length, reason}} object, not an error.
${exitCodesHelp('decode')}`,
    )
    .action(
      run(async (file: string, f: { protocol: string }) => {
        const protocol = Number(f.protocol);
        if (f.protocol.trim() === '' || !Number.isInteger(protocol) || protocol < 0 || protocol > 31)
          throw new UsageError(`--protocol: '${f.protocol}' is not a netlink protocol number (0-31)`);
        const [{ captureDatagrams }, { describeCapturedDatagram }] = await Promise.all([
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
        // Each datagram is printed as it is read: when the input goes bad part-way,
        // the generator throws only after everything before the bad bytes was printed.
        let index = 0;
        for (const d of datagrams) {
          const { messages, trailing } = describeCapturedDatagram(d.protocol, d.bytes, d.direction);
          for (const m of messages) {
            process.stdout.write(JSON.stringify({ datagram: index, direction: d.direction, ...m }) + '\n');
          }
          // bytes of a request past what the kernel reads (iproute2's padding...): noted, not an error
          if (trailing) process.stdout.write(JSON.stringify({ datagram: index, direction: d.direction, trailing }) + '\n');
          index++;
        }
        if (index === 0) throw new SynplugError(`'${file}' holds no netlink datagram`, 'decode');
      }),
    );
}
