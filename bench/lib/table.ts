/**
 * Plain aligned text tables and number formatting for the bench output.
 *
 * @module
 */

/** A cell: text, or a number already formatted by the caller. */
export type Cell = string | number;

/**
 * Render a table as aligned text: the first column left-aligned, the others
 * right-aligned (they hold numbers), a rule under the header.
 */
export function renderTable(title: string, header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const all = [header, ...rows].map((r) => r.map((c) => String(c)));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  const out = [title, line(all[0]), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of all.slice(1)) out.push(line(r));
  return out.join('\n') + '\n';
}

/** Microseconds with 1 decimal below 100, none above. */
export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return '-';
  return us < 100 ? us.toFixed(1) : us.toFixed(0);
}

/** Milliseconds: 2 decimals below 10, 1 below 1000, none above. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms < 10 ? ms.toFixed(2) : ms < 1000 ? ms.toFixed(1) : ms.toFixed(0);
}

/** A ratio as "12.3x" (2 decimals below 10). */
export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return '-';
  return `${r < 10 ? r.toFixed(2) : r.toFixed(1)}x`;
}

/** Kibibytes as MiB with one decimal. */
export function fmtMiB(kib: number): string {
  if (!Number.isFinite(kib)) return '-';
  return (kib / 1024).toFixed(1);
}

/** A target line: `PASS  text` or `FAIL  text`. */
export function verdict(pass: boolean, text: string): string {
  return `${pass ? 'PASS' : 'FAIL'}  ${text}`;
}
