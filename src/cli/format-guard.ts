/**
 * Text output of the guard commands (`--json` prints the results as they are).
 *
 * @module
 */
import { formatQdiscText, formatFilterText } from '../tc/format.js';
import { durationText } from '../iptables/format.js';
import type { MigrateReqReport } from '../guard/sysctl.js';
import { lossCauses } from '../guard/report.js';
import type { HistoryEntry } from '../guard/history.js';
import type { CheckResult, ProtectResult, SetupResult, StatusResult, TeardownResult, PlugResult, ReleaseResult } from '../guard/types.js';

/** Text for `synplug setup`. */
export function formatSetup(r: SetupResult): string {
  const text = formatSetupHold(r);
  return r.chose ? `${r.chose}\n${text}` : text;
}

/** The hold part of {@link formatSetup}. */
function formatSetupHold(r: SetupResult): string {
  if (r.queue) {
    const q = r.queue;
    const whose =
      q.scope === 'local'
        ? `SYNs to ${q.addrs.join(', ')} from this host`
        : `SYNs arriving on ${r.dev} to port ${q.ports.join(',')}${q.addrs.length ? ` (dst ${q.addrs.join(', ')})` : ''}`;
    const what = `${whose}, held in netfilter queue ${q.num} (maxlen ${q.maxlen}; rule in table inet ${q.table}, ${q.verdict === 'native' ? "nft's queue expression" : 'the NFQUEUE target through nft_compat'}; bypass while nobody holds)`;
    const lines = r.changed
      ? [`synplug queue hold set up: ${what}:`, ...r.actions.map((a) => `  ${a}`)]
      : [`synplug queue hold already set up: ${what}; nothing to change`];
    if (r.recovered) lines.unshift(r.recovered);
    return lines.join('\n');
  }
  if (r.inbound) {
    const i = r.inbound;
    const what = `SYNs on ${i.dev} to port ${i.ports.join(',')}${i.addrs.length ? ` (dst ${i.addrs.join(', ')})` : ''}, held on ${i.ifb} (${i.classifier}, ${i.families.join(' and ')})`;
    const lines = r.changed
      ? [`synplug inbound hold set up: ${what}:`, ...r.actions.map((a) => `  ${a}`)]
      : [`synplug inbound hold already set up: ${what}; nothing to change`];
    if (r.recovered) lines.unshift(r.recovered);
    return lines.join('\n');
  }
  const lines = r.changed
    ? [`synplug set up on ${r.dev} for ${r.addr} (mark ${r.mark}, plug limit ${r.limit} bytes):`, ...r.actions.map((a) => `  ${a}`)]
    : [`synplug already set up on ${r.dev} for ${r.addr}: nothing to change`];
  if (r.recovered) lines.unshift(r.recovered);
  return lines.join('\n');
}

/** The line `check` and `status` end with: net.ipv4.tcp_migrate_req and what it means for the listeners (src/guard/sysctl.ts). */
export function formatMigrateReq(r: MigrateReqReport): string {
  return `${r.name} = ${r.value ?? 'absent'} (${r.netns !== undefined ? `network namespace ${r.netns}` : 'this network namespace'}): ${r.meaning}`;
}

/** A hold's state in words. */
const stateWord = (state: string): string => (state === 'ok' ? 'complete' : state === 'absent' ? 'not set up' : 'PARTIAL');

/** What to run to set a hold up again: `synplug setup` or `synplug setup --inbound DEV --port P...`. */
const setupHint = (h: { mode: string; dev: string; ports?: number[]; setup?: string }): string =>
  h.setup ??
  (h.mode === 'inbound'
    ? `synplug setup --inbound ${h.dev} ${h.ports?.length ? h.ports.map((p) => `--port ${p}`).join(' ') : '--port PORT...'}`
    : 'synplug setup');

/** The state of several holds together: ok or absent when all are, else partial. */
const combine = (states: readonly string[]): string => (states.every((x) => x === 'ok') ? 'ok' : states.every((x) => x === 'absent') ? 'absent' : 'partial');

/** Text for `synplug check`. */
export function formatCheck(r: CheckResult): string {
  const onlyLocal = r.holds.length === 1 && r.holds[0].id === 'local';
  const one = r.holds.length === 1 ? r.holds[0] : undefined;
  const where = onlyLocal ? `on ${r.dev}` : one ? `(${one.id} on ${one.dev})` : `(${r.holds.map((h) => `${h.id}: ${h.state}`).join(', ')})`;
  // Every hold ok (or every one absent), yet partial: only an IFB of synplug's that no record lists makes it so.
  const own = combine(r.holds.map((h) => h.state));
  const head =
    r.unrecorded?.length && own !== 'partial'
      ? `synplug is ${own === 'ok' ? 'set up' : 'not set up'} ${where}, but IFB(s) of synplug's that no record lists are left:`
      : r.state === 'ok'
        ? onlyLocal
          ? `synplug is set up on ${r.dev} for ${r.addr}`
          : `synplug is set up ${where}`
        : r.state === 'absent'
          ? `synplug is not set up ${where}`
          : `synplug is partly or differently set up ${where}:`;
  const lines = [head];
  for (const p of r.pieces)
    lines.push(`  ${p.status === 'ok' ? 'ok       ' : p.status === 'missing' ? 'MISSING  ' : 'DIFFERENT'} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
  lines.push(...unrecordedLines(r.unrecorded).map((l) => `  ${l}`));
  const run = [...new Set(r.holds.filter((h) => h.state !== 'ok').map((h) => `'${setupHint(h)}'`))];
  if (r.state !== 'ok' && run.length) {
    const recorded = r.holds.some((h) => h.mode === 'inbound' && h.state === 'partial');
    lines.push(`run ${run.join(' and ')}${recorded ? " (or 'synplug protect --setup', which sets up every recorded hold again)" : ''} to complete it`);
  }
  return lines.join('\n');
}

/**
 * Text for `synplug plug`.
 * @param maxHold the --max-hold text the user gave (e.g. `10s`)
 */
export function formatPlug(r: PlugResult, maxHold: string): string {
  const local = !r.holds || r.holds.includes('local');
  const inbound = (r.holds ?? []).filter((h) => h !== 'local').map((h) => `on ${h.replace(/^inbound:/, '')}`);
  const where = [...(local ? [`to ${r.addr}`] : []), ...(inbound.length ? [`arriving ${inbound.join(', ')}`] : [])].join(' and ');
  return `plugged: new connections ${where} are held until 'synplug release' (at most ${maxHold})`;
}

/** Text for `synplug release`. */
export function formatRelease(r: ReleaseResult): string {
  if (r.orphaned && !r.released)
    return `not released: ${r.liveLeases} live lease(s) hold the plug (a running protect or a manual plug before its deadline); --orphaned releases only a plug nobody holds`;
  const broke = r.brokeLeases ? `; broke ${r.brokeLeases} live lease(s) (running protects or manual plugs)` : '';
  const also =
    (r.unrecorded?.length ? `; also released the plug(s) of synplug's IFB(s) found without a record: ${r.unrecorded.join(', ')}` : '') +
    (r.heldElsewhere?.length ? `; NOT released here: ${r.heldElsewhere.join('; ')}` : '');
  return r.plugExists
    ? `released${r.wasBuffering ? '' : ' (it was not recorded as plugged)'}; ${r.backlog} packet(s) were still queued${broke}${also}`
    : `no plug qdisc on ${r.dev}: nothing is held (synplug is not set up there)${broke}${also}`;
}

/** Text for `synplug protect` (on stderr). */
export function formatProtect(r: ProtectResult): string {
  const cmd = r.signal ? `killed by ${r.signal}` : `exit ${r.exitCode}`;
  const held =
    r.releasedPlug === false
      ? `held new connections for ${r.report.holdMs.toFixed(1)} ms${r.maxHoldReached ? ' (max-hold reached)' : ''}, then left the plug buffering for ${r.leftToHolders ?? 'other'} other holder(s) (the last one releases)`
      : `held new connections for ${r.report.holdMs.toFixed(1)} ms${r.maxHoldReached ? ' (max-hold reached)' : ''}`;
  const check = r.check ? `; check passed in ${r.check.durationMs.toFixed(1)} ms before the window` : '';
  const l = r.newListener;
  const where = l ? (l.address.includes(':') ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`) : '';
  const closed = l?.oldClosed ? ` and ${l.oldClosed} socket(s) of before the reload closed` : '';
  const listen =
    l === undefined
      ? ''
      : l === null
        ? '; --wait-listen saw no new listener'
        : `; --wait-listen: ${l.handedOver ? `the socket on ${where} was taken up by a new process` : `a new socket listened on ${where}`}${closed}`;
  return `synplug: ${held}; ${r.report.heldSyns} SYN(s) held and released; command ${cmd}${listen}; synplug's own time in the window ${r.overhead.totalUs} µs${check}\n${formatVerdict(r)}`;
}

/**
 * The reload's verdict, one line: `lossless: 0 refused, 0 reset, 0 dropped`;
 * or what was lost and its likely causes; or what could not be counted.
 */
export function formatVerdict(r: Pick<ProtectResult, 'report' | 'maxHoldReached' | 'newListener'>): string {
  const p = r.report;
  const n = (v: number | null) => (v === null ? '?' : String(v));
  const counts = `${n(p.refused)} refused, ${n(p.reset)} reset, ${p.dropped} dropped${p.listenerDrops ? `, ${p.listenerDrops} dropped by the listener` : ''}`;
  if (p.lossless === true) return `lossless: ${counts}`;
  if (p.lossless === null) return `not fully counted: ${counts} (${(p.uncounted ?? []).join('; ')})`;
  const causes = lossCauses(p, { maxHoldReached: r.maxHoldReached, waitedForListener: r.newListener !== undefined });
  return `LOST: ${counts}; likely cause: ${causes.join('; ')}`;
}

/** One recorded reload as a line: id, start, command, holds, hold time, held SYNs, exit status, the counts (history, status). */
export function formatHistoryEntry(e: HistoryEntry): string {
  const verdict = formatVerdict({ report: e.report, maxHoldReached: false, newListener: undefined }).replace(/; likely cause: .*$/, '');
  return `#${e.id} ${e.start} ${e.command} (${e.holds.join(', ')}): held ${e.report.holdMs.toFixed(1)} ms, ${e.report.heldSyns} SYN(s); exit ${e.exitCode}; ${verdict}`;
}

/** `status`'s line on the last reload recorded (or why the history cannot be read). */
export function formatLastReload(l: { lastReload: HistoryEntry | null; historyError?: string }): string {
  if (l.historyError) return `last reload: unknown: ${l.historyError}`;
  return `last reload: ${l.lastReload ? formatHistoryEntry(l.lastReload) : 'none recorded'}`;
}

/** `protect --json`: the result, its hold counts only in `report` (one shape). */
export function protectJson(r: ProtectResult): Omit<ProtectResult, 'heldMs' | 'packetsReleased' | 'drops'> {
  const { heldMs: _h, packetsReleased: _p, drops: _d, ...rest } = r;
  return rest;
}

/** Text for `synplug status`. */
export function formatStatus(r: StatusResult): string {
  const lines: string[] = [];
  if (r.recovered) lines.push(r.recovered);
  const local = r.holds?.find((h) => h.mode === 'local');
  const onlyLocal = local !== undefined && r.holds.length === 1;
  if (onlyLocal || !r.holds?.length) lines.push(`setup: ${stateWord(r.state)} on ${r.dev} for ${r.addr}`);
  else lines.push(`setup: ${stateWord(r.state)} (${r.holds.map((h) => `${h.id}: ${stateWord(h.state)}`).join(', ')})`);
  if (local && !onlyLocal) lines.push(`local hold on ${r.dev} for ${r.addr}: ${stateWord(local.state)}`);
  for (const p of local?.pieces ?? (r.holds?.length ? [] : r.pieces))
    if (p.status !== 'ok') lines.push(`  ${p.status.toUpperCase()} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
  const p = r.plug;
  if (p) {
    const when = new Date(p.state === 'buffering' ? p.since : (p.releasedAt ?? p.since)).toISOString();
    lines.push(
      `plug: ${p.state === 'buffering' ? `BUFFERING since ${when} (by ${p.owner} pid ${p.pid}, until ${new Date(p.deadline).toISOString()})` : `released (last at ${when})`}`,
    );
  } else lines.push('plug: no record');
  for (const l of r.leases ?? []) {
    lines.push(
      `lease: ${l.owner} pid ${l.pid}${l.command ? ` (${l.command.join(' ')})` : ''} since ${new Date(l.since).toISOString()}, until ${new Date(l.deadline).toISOString()}, holds ${l.holds.join(', ')}`,
    );
  }
  if (local || !r.holds?.length) {
    if (r.held !== undefined) lines.push(`packets: ${r.held} held now, ${r.passed} passed, ${r.dropped} dropped over the limit`);
    lines.push(
      `marking: ${r.marking.length ? r.marking.map((m) => `${m.address}${m.expiresMs !== undefined ? ` (${durationText(m.expiresMs)} left)` : ''}`).join(', ') : 'off (no element in the set)'}`,
    );
  }
  if (r.qdiscs.length) {
    lines.push('qdiscs:');
    for (const q of r.qdiscs)
      lines.push(
        ...formatQdiscText(q, { stats: true })
          .split('\n')
          .map((l) => `  ${l}`),
      );
  }
  if (r.filters.length) {
    lines.push('filters:');
    for (const f of r.filters)
      lines.push(
        ...formatFilterText(f)
          .split('\n')
          .map((l) => `  ${l}`),
      );
  }
  if (r.ruleset)
    lines.push(
      'nftables:',
      ...r.ruleset
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  for (const h of r.holds ?? []) {
    if (h.via === 'queue') {
      const who = h.bound
        ? `HELD now by netlink port ${h.bound.portId} (${h.bound.queued} SYN(s) queued, ${h.bound.dropped} dropped)`
        : 'nobody holds it (SYNs bypass)';
      lines.push(
        `queue hold ${h.id} on ${h.dev}: ${stateWord(h.state)}; SYNs${h.ports?.length ? ` to port ${h.ports.join(',')}` : ''}${h.addrs?.length ? ` to ${h.addrs.join(', ')}` : ''} go to queue ${h.queueNum} (${h.verdict === 'compat' ? 'NFQUEUE target' : 'queue expression'}, table inet ${h.table}); ${who}`,
      );
      for (const p of h.pieces) if (p.status !== 'ok') lines.push(`  ${p.status.toUpperCase()} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
      continue;
    }
    if (h.mode !== 'inbound') continue;
    if (h.ifb === undefined) {
      lines.push(`inbound hold ${h.dev}: not set up (run '${setupHint(h)}')`);
      continue;
    }
    lines.push(
      `inbound hold ${h.dev}: ${stateWord(h.state)}; SYNs to port ${h.ports?.join(',')}${h.addrs?.length ? ` dst ${h.addrs.join(', ')}` : ''} held on ${h.ifb} (${h.classifier})`,
    );
    for (const p of h.pieces) if (p.status !== 'ok') lines.push(`  ${p.status.toUpperCase()} ${p.piece}${p.detail ? ` (${p.detail})` : ''}`);
    if (h.held !== undefined) lines.push(`  packets: ${h.held} held now, ${h.passed} passed, ${h.dropped} dropped over the limit`);
    for (const q of h.qdiscs)
      lines.push(
        ...formatQdiscText(q, { stats: true })
          .split('\n')
          .map((l) => `  ${l}`),
      );
    for (const f of h.filters)
      lines.push(
        ...formatFilterText(f)
          .split('\n')
          .map((l) => `  ${l}`),
      );
  }
  lines.push(...unrecordedLines(r.unrecorded));
  // tc's text puts a blank after some fields: no line ends in one
  return lines.map((l) => l.trimEnd()).join('\n');
}

/** The lines naming IFBs of synplug's that no record lists (check, status). */
const unrecordedLines = (u: ReadonlyArray<{ ifb: string; dev: string; teardown: string }> | undefined): string[] =>
  (u ?? []).map((x) => `unrecorded: ${x.ifb} (synplug's alias, no record) — '${x.teardown}' removes it`);

/** Text for `synplug teardown`. */
export function formatTeardown(r: TeardownResult): string {
  if (r.nothingSetUp) return [r.nothingSetUp, ...(r.kept.length ? ['left alone:', ...r.kept.map((x) => `  ${x}`)] : [])].join('\n');
  const lines = r.removed.length
    ? [
        `removed${r.holds.length && !(r.holds.length === 1 && r.holds[0] === 'local') ? ` (${r.holds.join(', ')})` : ` from ${r.dev}`}:`,
        ...r.removed.map((x) => `  ${x}`),
      ]
    : [`nothing of synplug's on ${r.dev} to remove${r.holds.length ? ` (forgot the record of ${r.holds.join(', ')})` : ''}`];
  if (r.kept.length) lines.push('left alone:', ...r.kept.map((x) => `  ${x}`));
  if (r.removedStateDir) lines.push('removed the state directory (setup had created it)');
  return lines.join('\n');
}
