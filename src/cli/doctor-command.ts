/**
 * `synplug doctor [--json]`: which holds this kernel supports and why not,
 * the capabilities, the TCP socket diagnostics, `tcp_migrate_req` (the
 * engine is src/guard/doctor.ts). Changes nothing.
 *
 * @module
 */
import type { Command } from 'commander';
import type { DoctorReport } from '../guard/doctor.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';
import { jsonOption, run } from './run.js';

/**
 * The report as text: one line per hold, then the rest.
 * @param r what doctor found
 */
export function formatDoctor(r: DoctorReport): string {
  const yes = (b: boolean | null) => (b === null ? 'unknown' : b ? 'yes' : 'no');
  const lines = [`kernel ${r.kernel}`, 'holds:'];
  for (const h of r.holds) {
    const state = h.supported === null ? 'not checked' : h.supported ? 'supported' : 'not supported';
    lines.push(`  ${h.name.padEnd(8)} via ${h.via.padEnd(5)} (${h.scopes.join(', ')} clients)  ${state}: ${h.why}`);
  }
  lines.push(`privileges: CAP_NET_ADMIN ${yes(r.privileges.netAdmin)}, CAP_SYS_ADMIN ${yes(r.privileges.sysAdmin)}`);
  lines.push(
    `--wait-listen (TCP socket diagnostics): ${r.diag.tcpDiag ? 'available' : `missing ${r.diag.missing.map((m) => m.module).join(', ')} (${r.diag.missing[0]?.state ?? ''})`}`,
  );
  lines.push(`net.ipv4.tcp_migrate_req: ${r.sysctl.tcpMigrateReq ?? 'not available (before Linux 5.14, or unreadable)'}`);
  for (const n of r.notChecked) lines.push(`not checked: ${n}`);
  const usable = r.holds.filter((h) => h.supported).map((h) => `${h.name} (via ${h.via})`);
  if (usable.length) lines.push(`usable here: ${usable.join(', ')}; 'synplug setup' picks the plug hold where it works, else the queue hold`);
  return lines.join('\n');
}

/**
 * doctor's exit code: 4 when the holds could not be probed (no
 * CAP_NET_ADMIN), 5 when no hold works here, else 0.
 * @param r what doctor found
 */
export function doctorExitCode(r: DoctorReport): number {
  if (r.holds.some((h) => h.supported === null)) return EXIT.NOT_PERMITTED;
  return r.holds.some((h) => h.supported) ? EXIT.OK : EXIT.MISSING_SUPPORT;
}

/** Register `synplug doctor` on the program. */
export function doctorCommand(program: Command): void {
  program
    .command('doctor')
    .description("which holds this kernel supports and why not, the capabilities, --wait-listen's socket diagnostics and tcp_migrate_req; changes nothing")
    .addOption(jsonOption())
    .addHelpText('after', exitCodesHelp('doctor'))
    .action(
      run(async (f: { json?: boolean }) => {
        const { doctor } = await import('../guard/doctor.js');
        const r = await doctor();
        process.stdout.write(`${f.json ? JSON.stringify(r) : formatDoctor(r)}\n`);
        return doctorExitCode(r);
      }),
    );
}
