/**
 * Text output of the guard commands (`--json` prints the results as they are).
 *
 * @module
 */
import { formatQdiscText, formatFilterText } from '../tc/format.js';
import { durationText } from '../iptables/format.js';
import { notListenedNotice, type MigrateReqReport } from '../guard/sysctl.js';
import type {
  CheckResult,
  ListenerCut,
  PieceState,
  ProtectResult,
  SetupResult,
  StatusResult,
  TeardownResult,
  PlugResult,
  ReleaseResult,
} from '../guard/types.js';
import { holdWords, modeOfHold } from '../guard/modes/index.js';
import { lossCauses } from '../guard/report.js';
import type { HistoryEntry } from '../guard/history.js';
import type { HolderFailure } from '../guard/holder-log.js';
import { COMMAND_EXIT_CODES } from './exit-codes.js';

/** Text for `synplug setup`. */
export function formatSetup(r: SetupResult): string {
  const text = formatSetupHold(r);
  const notice = r.portsNotListened ? `\nnotice: ${notListenedNotice(r.portsNotListened)}` : '';
  return `${r.chose ? `${r.chose}\n${text}` : text}${notice}`;
}

/** The hold part of {@link formatSetup}: the mode's head line, then the actions taken. */
function formatSetupHold(r: SetupResult): string {
  const head = modeOfHold({ id: r.hold }, r.dev)?.setupHead(r) ?? `synplug set up ${r.hold}${r.changed ? ':' : '; nothing to change'}`;
  const lines = [head, ...(r.changed ? r.actions.map((a) => `  ${a}`) : [])];
  if (r.recovered) lines.unshift(r.recovered);
  return lines.join('\n');
}

/** The line `check` and `status` end with: net.ipv4.tcp_migrate_req and what it means for the listeners (src/guard/sysctl.ts); then a notice for held ports nothing listens on. */
export function formatMigrateReq(r: MigrateReqReport): string {
  const notice = r.portsNotListened ? `\nnotice: ${notListenedNotice(r.portsNotListened)}` : '';
  return `${r.name} = ${r.value ?? 'absent'} (${r.netns !== undefined ? `network namespace ${r.netns}` : 'this network namespace'}): ${r.meaning}${notice}`;
}

/** The options a command was given that every command it suggests must repeat to act on the same holds. */
export interface GivenPlace {
  /** `--state-dir` as given */
  stateDir?: string;
  /** `--netns` as given */
  netns?: string;
}

/** A command suggested in a text: `'synplug CMD ...'`, CMD one of the commands (not a quoted name such as an IFB's alias). */
const SUGGESTED = new RegExp(`'synplug (${Object.keys(COMMAND_EXIT_CODES).join('|')})((?: [^']*)?)'`, 'g');

/** An option's value as a shell word inside a quoted suggestion (double-quoted when it needs quoting). */
const shellWord = (v: string): string => (/^[\w@%+=:,./-]+$/.test(v) ? v : `"${v.replace(/(["\\$`])/g, '\\$1')}"`);

/**
 * Every command a text suggests (`'synplug setup ...'`) with the options the user gave that it needs to act on the
 * same holds (`--state-dir`, `--netns`), unless it names its own.
 * @param text a command's output
 * @param given the options given
 */
export function withGivenPlace(text: string, given: GivenPlace): string {
  const extra = (rest: string) =>
    (given.stateDir !== undefined && !rest.includes('--state-dir') ? ` --state-dir ${shellWord(given.stateDir)}` : '') +
    (given.netns !== undefined && !rest.includes('--netns') ? ` --netns ${shellWord(given.netns)}` : '');
  return text.replace(SUGGESTED, (_m, cmd: string, rest: string) => `'synplug ${cmd}${rest}${extra(rest)}'`);
}

/** A hold's state in words. */
const stateWord = (state: string): string => (state === 'ok' ? 'complete' : state === 'absent' ? 'not set up' : 'PARTIAL');

/** What to run to set a hold up again: the hold's own setup command (check's entry says it; else its mode's words). */
const setupHint = (h: CheckResult['holds'][number]): string => h.setup ?? holdWords(h).setup;

/** A piece's state as check and status print it: `ok`, and what is wrong in capitals (`MISSING`, `DIFFERENT`), one word for each everywhere. */
const pieceWord = (status: PieceState['status']): string => (status === 'ok' ? 'ok' : status.toUpperCase());

/** A piece in check's column: its state, padded, then the piece and its detail. */
const pieceCell = (p: PieceState): string => `  ${pieceWord(p.status).padEnd(9)} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`;

/** A piece that is not ok, as status lists it. */
const pieceLine = (p: PieceState): string => `  ${pieceWord(p.status)} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`;

/** The state of several holds together: ok or absent when all are, else partial. */
const combine = (states: readonly string[]): string => (states.every((x) => x === 'ok') ? 'ok' : states.every((x) => x === 'absent') ? 'absent' : 'partial');

/** Text for `synplug check`. */
export function formatCheck(r: CheckResult): string {
  if (r.nothingSetUp) return [r.nothingSetUp, ...r.pieces.map(pieceCell)].join('\n');
  const onlyLocal = r.holds.length === 1 && holdWords(r.holds[0]).top ? r.holds[0] : undefined;
  const one = r.holds.length === 1 ? r.holds[0] : undefined;
  const where = onlyLocal ? `on ${onlyLocal.dev}` : one ? `(${one.id} on ${one.dev})` : `(${r.holds.map((h) => `${h.id}: ${h.state}`).join(', ')})`;
  // Every hold ok (or every one absent), yet partial: only an IFB of synplug's that no record lists makes it so.
  const own = combine(r.holds.map((h) => h.state));
  const head =
    r.unrecorded?.length && own !== 'partial'
      ? `synplug is ${own === 'ok' ? 'set up' : 'not set up'} ${where}, but IFB(s) of synplug's that no record lists are left:`
      : r.state === 'ok'
        ? onlyLocal
          ? `synplug is set up on ${onlyLocal.dev} for ${onlyLocal.addr}`
          : `synplug is set up ${where}`
        : r.state === 'absent'
          ? `synplug is not set up ${where}`
          : `synplug is partly or differently set up ${where}:`;
  const lines = [head];
  lines.push(...r.pieces.map(pieceCell));
  lines.push(...unrecordedLines(r.unrecorded).map((l) => `  ${l}`));
  if (r.interrupted) lines.push(`  ${r.interrupted}`);
  // a hold whose pieces are another state directory's: setup here is refused, so its own advice instead
  for (const h of r.holds) if (h.elsewhere) lines.push(`${holdWords(h).label}: ${h.elsewhere}`);
  // nor a setup for a hold whose device is gone (it cannot complete it: its device piece says what does)
  const run = [...new Set(r.holds.filter((h) => h.state !== 'ok' && !h.elsewhere && !h.deviceGone).map((h) => `'${setupHint(h)}'`))];
  if (r.state !== 'ok' && run.length) {
    const recorded = !r.interrupted && r.holds.some((h) => h.state === 'partial' && holdWords(h).fromRecord);
    // nothing of a hold there: set it up; some of it: complete it
    const what = r.state === 'absent' ? 'to set it up' : 'to complete it';
    lines.push(`run ${run.join(' and ')}${recorded ? " (or 'synplug protect --setup', which sets up every recorded hold again)" : ''} ${what}`);
  }
  return lines.join('\n');
}

/**
 * Text for `synplug plug`.
 * @param maxHold the --max-hold text the user gave (e.g. `10s`)
 */
export function formatPlug(r: PlugResult, maxHold: string): string {
  const where = r.holds?.length ? r.holds.map((id) => holdWords({ id, dev: r.dev, addr: r.addr }).clients).join(' and ') : `to ${r.addr}`;
  return `plugged: new connections ${where} are held until 'synplug release' (at most ${maxHold})`;
}

/** Text for `synplug release`. */
export function formatRelease(r: ReleaseResult): string {
  if (r.orphaned && !r.released)
    return `not released: ${r.liveLeases} live lease(s) hold it (a running protect, or a manual plug before its deadline); --orphaned releases only a hold nobody holds`;
  const manual = r.brokeManualPlugs ?? 0;
  const protects = r.brokeLeases - manual;
  const broke =
    (manual ? `; this ended the manual plug's hold ('synplug plug')` : '') +
    (protects > 0 ? `; ended the hold of ${protects} running protect(s) early (their commands go on, no longer held)` : '');
  const also =
    (r.unrecorded?.length ? `; also released the plug(s) of synplug's IFB(s) found without a record: ${r.unrecorded.join(', ')}` : '') +
    (r.heldElsewhere?.length ? `; NOT released here: ${r.heldElsewhere.join('; ')}` : '');
  const queued = r.backlog ? `; ${r.backlog} packet(s) were still queued` : '';
  // set up (recorded) with no plug (removed meanwhile, by hand or by a teardown): nothing held now, as for a hold
  // whose plug is there; not "not set up"
  return r.plugExists || r.setUp
    ? r.wasBuffering || r.brokeLeases
      ? `released${r.wasBuffering && r.report ? ` after holding new connections for ${r.report.holdMs.toFixed(1)} ms (${r.report.heldSyns} SYN(s) held)` : ''}${queued}${broke}${also}`
      : `nothing was held: neither 'synplug plug' nor a protect was holding, so there was nothing to release${queued}${also}`
    : r.nothingSetUp
      ? `nothing was held: ${r.nothingSetUp}`
      : `no hold on ${r.dev}: nothing is held (synplug is not set up there)${broke}${also}`;
}

/** Text for `synplug protect` (on stderr). */
export function formatProtect(r: ProtectResult): string {
  const cmd = r.signal ? `killed by ${r.signal}` : `exit ${r.exitCode}`;
  const heldFor = `held new connections for ${r.report.holdMs.toFixed(1)} ms${r.maxHoldReached ? ' (max-hold reached)' : ''}`;
  const held = r.leaseBroken
    ? `${heldFor}, until ${r.tornDown ? 'a teardown' : "a manual 'synplug release' (or teardown)"} ended the hold`
    : r.releasedAtDeadline
      ? `${heldFor}, let go at the deadline by synplug's watchdog or queue holder (this protect came late to its release)`
      : r.releasedHold === false
        ? `${heldFor}, then left the hold to ${r.leftToHolders !== undefined ? `${r.leftToHolders} other` : 'other'} holder(s) (the last one releases)`
        : heldFor;
  const check = r.check ? `; check passed in ${r.check.durationMs.toFixed(1)} ms before the window` : '';
  const l = r.newListener;
  const where = l ? (l.address.includes(':') ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`) : '';
  const closed = l?.oldClosed ? ` and ${l.oldClosed} socket(s) of before the reload closed` : '';
  const listen =
    l === undefined
      ? ''
      : l === null
        ? '; --wait-listen saw no new listener'
        : `; --wait-listen: ${l.handedOver ? `the socket on ${where} was taken up by a new process` : `a new socket listened on ${where}`}${closed}${
            r.overhead.listenWaitUs !== undefined ? ` ${(r.overhead.listenWaitUs / 1000).toFixed(1)} ms after the command's exit` : ''
          }`;
  return `synplug: ${held}; ${r.report.heldSyns} SYN(s) held and released; command ${cmd}${listen}; synplug's own time in the window ${r.overhead.totalUs} µs${check}\n${formatVerdict(r)}`;
}

/**
 * The reload's verdict, one line: `lossless: 0 refused, 0 reset, 0 dropped`;
 * or what was lost (refused: SYN packets, retransmissions included) and its
 * likely causes; or what could not be counted.
 */
export function formatVerdict(r: Pick<ProtectResult, 'report' | 'maxHoldReached' | 'newListener'>): string {
  const p = r.report;
  const n = (v: number | null) => (v === null ? '?' : String(v));
  // refused counts SYN packets: a client's retransmissions each (an inbound hold queues them too), so the word says so
  // counted until shortly after the release (docs/cli.md): a server still down later refuses more, uncounted
  const refused = p.refused ? `at least ${p.refused} refused SYN(s), retransmissions included` : `${n(p.refused)} refused`;
  const counts = `${refused}, ${n(p.reset)} reset, ${n(p.dropped)} dropped${p.listenerDrops ? `, ${p.listenerDrops} dropped by the listener (packets, retransmissions included)` : ''}`;
  if (p.lossless === true) return `lossless: ${counts}`;
  if (p.lossless === null) return `not fully counted: ${counts} (${(p.uncounted ?? []).join('; ')})`;
  const causes = lossCauses(p, { maxHoldReached: r.maxHoldReached, waitedForListener: r.newListener !== undefined });
  return `LOST: ${counts}; likely cause: ${causes.join('; ')}`;
}

/** One recorded reload as a line: id, end (or start), command, holds, start when a second or more before the end, hold time, held SYNs, exit status, the counts (history, status). */
export function formatHistoryEntry(e: HistoryEntry): string {
  const verdict = formatVerdict({ report: e.report, maxHoldReached: e.maxHoldReached === true, newListener: undefined }).replace(/; likely cause: .*$/, '');
  // the history is in the order the commands ended: each line is labelled with its end (an earlier synplug's: its start)
  const when = e.end === undefined ? `started ${e.start}` : `ended ${e.end}`;
  const began = e.end !== undefined && Date.parse(e.end) - Date.parse(e.start) >= 1000 ? ` (started ${e.start})` : '';
  return `#${e.id} ${when} ${e.command} (${e.holds.join(', ')})${began}: held ${e.report.holdMs.toFixed(1)} ms${e.maxHoldReached ? ' (max-hold reached)' : ''}, ${e.killed ? 'SYNs not counted; KILLED during the hold' : e.maxHold ? "SYNs not counted; a manual plug's hold ended at its --max-hold" : `${e.report.heldSyns} SYN(s); exit ${e.exitCode}`}; ${verdict}`;
}

/** `status`'s line on the last reload recorded (or why the history cannot be read). */
export function formatLastReload(l: { lastReload: HistoryEntry | null; historyError?: string }): string {
  if (l.historyError) return `last reload: unknown: ${l.historyError}`;
  return `last reload: ${l.lastReload ? formatHistoryEntry(l.lastReload) : 'none recorded'}`;
}

/**
 * `status`'s line on the last failure a queue holder recorded in the state directory's holder log (or why the log
 * cannot be read); undefined when there is none.
 */
export function formatHolderFailure(h: { lastHolderFailure: HolderFailure | null; holderLog?: string; holderLogError?: string }): string | undefined {
  if (h.holderLogError) return `queue holder log: unreadable: ${h.holderLogError}`;
  const f = h.lastHolderFailure;
  if (!f) return undefined;
  return `queue holder: last failure ${f.at} (queue ${f.queueNum}, pid ${f.pid}): ${f.message}${h.holderLog ? ` (all of them: ${h.holderLog})` : ''}`;
}

/** Text for `synplug status`. */
export function formatStatus(r: StatusResult): string {
  const lines: string[] = [];
  if (r.recovered) lines.push(r.recovered);
  if (r.nothingSetUp && !r.holds.some((h) => holdWords(h).top)) return [...lines, `setup: ${r.nothingSetUp}`].join('\n');
  const local = r.holds.find((h) => holdWords(h).top);
  const onlyLocal = local !== undefined && r.holds.length === 1;
  if (onlyLocal) lines.push(`setup: ${stateWord(r.state)} on ${local.dev} for ${local.addr}`);
  else lines.push(`setup: ${stateWord(r.state)} (${r.holds.map((h) => `${h.id}: ${stateWord(h.state)}`).join(', ')})`);
  if (local && !onlyLocal) lines.push(`local hold on ${local.dev} for ${local.addr}: ${stateWord(local.state)}`);
  for (const p of local?.pieces ?? []) if (p.status !== 'ok') lines.push(pieceLine(p));
  if (r.addrNotHeld) lines.push(`  ${r.addrNotHeld}`);
  const p = r.plug;
  if (p) {
    const when = new Date(p.state === 'buffering' ? p.since : (p.releasedAt ?? p.since)).toISOString();
    lines.push(
      `hold: ${
        p.state === 'buffering'
          ? holdingText(p, r.leases)
          : p.neverHeld
            ? `never held since setup (at ${new Date(p.since).toISOString()})`
            : `released (last at ${when})`
      }`,
    );
  } else lines.push('hold: no record (plug.json)');
  for (const l of r.leases) {
    lines.push(
      `lease: ${l.owner} pid ${l.pid}${l.command ? ` (${l.command.join(' ')})` : ''} since ${new Date(l.since).toISOString()}, until ${new Date(l.deadline).toISOString()}, holds ${l.holds.join(', ')}`,
    );
  }
  if (local) lines.push(...localStatusLines(local));
  for (const h of r.holds) {
    const [head, ...more] = holdWords(h).status(h, stateWord);
    if (head !== undefined) lines.push(head, ...h.pieces.filter((p) => p.status !== 'ok').map(pieceLine), ...more);
  }
  lines.push(...unrecordedLines(r.unrecorded));
  // tc's text puts a blank after some fields: no line ends in one
  return lines.map((l) => l.trimEnd()).join('\n');
}

/**
 * `status`' words on a hold buffering: since the oldest live lease took it, by whom, and until the last one's
 * deadline at most (plug.json names only the holder that recorded it: with overlapping protects, one of them); with
 * no live lease, what plug.json says.
 */
function holdingText(p: NonNullable<StatusResult['plug']>, leases: StatusResult['leases']): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  if (!leases.length) return `HOLDING since ${iso(p.since)} (by ${p.owner} pid ${p.pid}, until ${iso(p.deadline)})`;
  const oldest = leases.reduce((a, b) => (b.since < a.since ? b : a));
  const last = Math.max(...leases.map((l) => l.deadline));
  const by = `${oldest.owner} pid ${oldest.pid}`;
  return leases.length === 1
    ? `HOLDING since ${iso(oldest.since)} (by ${by}, until ${iso(last)})`
    : `HOLDING since ${iso(oldest.since)} (since the oldest of ${leases.length} live leases, ${by}; each listed below; until ${iso(last)} at most)`;
}

/** `status`' lines on the local plug hold after the leases: its counters, marking, qdiscs, filters and nftables table. */
function localStatusLines(local: StatusResult['holds'][number]): string[] {
  const lines: string[] = [];
  const marking = local.marking ?? [];
  if (local.held !== undefined) lines.push(`packets: ${local.held} held now, ${local.passed} passed, ${local.dropped} dropped over the limit`);
  lines.push(
    `marking: ${marking.length ? marking.map((m) => `${m.address}${m.expiresMs !== undefined ? ` (${durationText(m.expiresMs)} left)` : ''}`).join(', ') : 'off (no element in the set)'}`,
  );
  if (local.qdiscs.length) {
    lines.push('qdiscs:');
    for (const q of local.qdiscs)
      lines.push(
        ...formatQdiscText(q, { stats: true })
          .split('\n')
          .map((l) => `  ${l}`),
      );
  }
  if (local.filters.length) {
    lines.push('filters:');
    for (const f of local.filters)
      lines.push(
        ...formatFilterText(f)
          .split('\n')
          .map((l) => `  ${l}`),
      );
  }
  if (local.ruleset)
    lines.push(
      'nftables:',
      ...local.ruleset
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  return lines;
}

/** The lines naming IFBs of synplug's that no record lists (check, status). */
const unrecordedLines = (u: ReadonlyArray<{ ifb: string; dev: string; teardown: string }> | undefined): string[] =>
  (u ?? []).map((x) => `unrecorded: ${x.ifb} (synplug's alias, no record) — '${x.teardown}' removes it`);

/**
 * teardown's first lines on the live leases it broke: which protect (pid, command) or manual plug, and what
 * becomes of its hold and its report. Verdict first: a running reload lost its hold.
 */
export function brokenLeaseLines(r: Pick<TeardownResult, 'brokenLeases'>): string[] {
  return (r.brokenLeases ?? []).map((l) => {
    const since = `held ${l.holds.join(', ')} since ${new Date(l.since).toISOString()}`;
    return l.owner === 'protect'
      ? `ENDED the hold of a running protect: pid ${l.pid}${l.command ? ` (${l.command.join(' ')})` : ''}, ${since}. Its hold was released and removed: its command goes on, no longer held (new connections are no longer held for it); its report says a teardown ended the hold, and it records no history line or metrics here`
      : `ended a manual plug's hold ('synplug plug', pid ${l.pid}), ${since}: released and removed before its --max-hold`;
  });
}

/** Text for `synplug teardown`. */
export function formatTeardown(r: TeardownResult): string {
  const broke = brokenLeaseLines(r);
  if (r.nothingSetUp)
    return [...broke, r.nothingSetUp, ...(r.kept.length ? ['left alone:', ...r.kept.map((x) => `  ${x}`)] : []), ...keptDirLine(r)].join('\n');
  const lines = r.removed.length
    ? [
        `removed${r.holds.length && !(r.holds.length === 1 && holdWords({ id: r.holds[0], dev: r.dev }).top) ? ` (${r.holds.join(', ')})` : ` from ${r.dev}`}:`,
        ...r.removed.map((x) => `  ${x}`),
      ]
    : // with pieces left alone (another state directory's, made by someone else): nothing of this directory's, not "nothing of synplug's"
      [
        `nothing ${r.kept.length ? 'of this state directory' : "of synplug's"} on ${r.dev} to remove${r.holds.length ? ` (forgot the record of ${r.holds.join(', ')})` : ''}`,
      ];
  if (r.kept.length) lines.push('left alone:', ...r.kept.map((x) => `  ${x}`));
  if (r.removedStateDir) lines.push('removed the state directory (setup had created it)');
  lines.push(...keptDirLine(r));
  return [...broke, ...lines, ...(r.listenersCut ?? []).map(listenerCutLine)].join('\n');
}

/** teardown's warning for a server that listened on an address it removed (TeardownResult.listenersCut). */
function listenerCutLine(l: ListenerCut): string {
  const who = l.pids.length ? `${l.commands.join(', ') || 'a process'} (pid ${l.pids.join(', ')})` : 'a server (its process cannot be seen)';
  const at = l.address.includes(':') ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`;
  const on = l.listener.includes(':') ? `[${l.listener}]:${l.port}` : `${l.listener}:${l.port}`;
  return `warning: ${who} listens on ${on}, and this teardown removed the address ${l.address}: its clients connecting to ${at} are refused until setup runs again (it adds the address back)`;
}

/** teardown's line on the state directory it kept, and what is in it (the reload history...): never left unsaid. */
const keptDirLine = (r: TeardownResult): string[] =>
  r.keptStateDir
    ? [
        `kept ${r.keptStateDir.path} (${r.keptStateDir.files.join(', ')}): the reload history and metrics totals stay after teardown ('synplug history' reads them); remove the directory to drop them`,
      ]
    : [];
