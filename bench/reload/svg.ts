/**
 * The reload bench's figure, as plain SVG text (no dependency): one panel per
 * method, x = time in the run (s), y = request latency including the TCP
 * connect (log scale), one dot per request, reloads as shaded spans with a
 * line at their start, failed requests in red (at the time they failed).
 *
 * Dots that would land on the same half pixel are drawn once (a run has
 * tens of thousands of requests; what is drawn looks the same), every failed
 * request is drawn.
 */
import type { RequestRecord } from './stats.js';

/** One panel's data; times are wall clock ms since the epoch. */
export interface Panel {
  title: string;
  subtitle: string;
  windowStart: number;
  windowEnd: number;
  records: readonly RequestRecord[];
  /** heldMs: synplug's plug hold (protect --json), drawn darker, ending at the reload's end */
  reloads: readonly { start: number; end: number; heldMs?: number }[];
}

const W = 1100;
const PANEL_H = 230;
const M = { left: 74, right: 24, top: 44, bottom: 34 };
const GAP = 18;

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function niceStep(span: number, target: number): number {
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function latLabel(ms: number): string {
  if (ms >= 1000) return `${ms / 1000} s`;
  if (ms >= 1) return `${ms} ms`;
  return `${ms * 1000} µs`;
}

/** Build the SVG document for the panels. */
export function renderSvg(title: string, note: string, panels: readonly Panel[]): string {
  // Shared y range over all panels, in decades.
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of panels) {
    for (const r of p.records) {
      const v = Math.max(r.total, 0.01);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (!Number.isFinite(lo)) {
    lo = 0.1;
    hi = 1000;
  }
  const yMinExp = Math.floor(Math.log10(lo));
  const yMaxExp = Math.max(yMinExp + 2, Math.ceil(Math.log10(hi * 1.0001)));
  const plotW = W - M.left - M.right;
  const plotH = PANEL_H - M.top - M.bottom;
  const H = 60 + panels.length * (PANEL_H + GAP) + 30;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    // the accessible name (and what Biome's a11y rule asks of an SVG): the figure's title
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${esc(title)}</text>`,
    `<text x="${W / 2}" y="42" text-anchor="middle" fill="#555">${esc(note)}</text>`,
  );
  panels.forEach((p, pi) => {
    const y0 = 60 + pi * (PANEL_H + GAP);
    const span = Math.max(1, p.windowEnd - p.windowStart);
    const xOf = (t: number): number => M.left + ((t - p.windowStart) / span) * plotW;
    const yOf = (ms: number): number => {
      const e = Math.log10(Math.max(ms, 10 ** yMinExp));
      return y0 + M.top + plotH - ((e - yMinExp) / (yMaxExp - yMinExp)) * plotH;
    };
    out.push(`<g>`);
    out.push(`<text x="${M.left}" y="${y0 + 18}" font-size="14" font-weight="bold">${esc(p.title)}</text>`);
    out.push(`<text x="${M.left}" y="${y0 + 34}" fill="#444">${esc(p.subtitle)}</text>`);
    out.push(`<rect x="${M.left}" y="${y0 + M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
    // y grid: decades
    for (let e = yMinExp; e <= yMaxExp; e++) {
      const y = yOf(10 ** e).toFixed(1);
      out.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${y}" y2="${y}" stroke="#e3e3e3"/>`);
      out.push(`<text x="${M.left - 6}" y="${y}" dy="4" text-anchor="end" fill="#333">${latLabel(10 ** e)}</text>`);
    }
    // x ticks: seconds
    const spanS = span / 1000;
    const step = niceStep(spanS, 10);
    for (let s = 0; s <= spanS + 1e-9; s += step) {
      const x = xOf(p.windowStart + s * 1000).toFixed(1);
      out.push(`<line x1="${x}" x2="${x}" y1="${y0 + M.top + plotH}" y2="${y0 + M.top + plotH + 4}" stroke="#999"/>`);
      out.push(`<text x="${x}" y="${y0 + M.top + plotH + 16}" text-anchor="middle" fill="#333">${Number(s.toFixed(3))}</text>`);
    }
    out.push(`<text x="${M.left + plotW}" y="${y0 + PANEL_H - 4}" text-anchor="end" fill="#555">time in the run (s)</text>`);
    out.push(`<text transform="translate(14 ${y0 + M.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#555">latency incl. connect</text>`);
    // reloads
    for (const r of p.reloads) {
      const x1 = xOf(r.start);
      const x2 = Math.max(x1 + 0.5, xOf(r.end));
      out.push(`<rect x="${x1.toFixed(1)}" y="${y0 + M.top}" width="${(x2 - x1).toFixed(1)}" height="${plotH}" fill="#f2a33a" fill-opacity="0.13"/>`);
      out.push(`<line x1="${x1.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${y0 + M.top}" y2="${y0 + M.top + plotH}" stroke="#e08a00" stroke-width="0.8"/>`);
      if (r.heldMs !== undefined && Number.isFinite(r.heldMs)) {
        const h1 = Math.max(x1, xOf(r.end - r.heldMs));
        out.push(
          `<rect x="${h1.toFixed(1)}" y="${y0 + M.top}" width="${Math.max(0.5, x2 - h1).toFixed(1)}" height="${plotH}" fill="#8e44ad" fill-opacity="0.16"/>`,
        );
      }
    }
    // dots: successes (deduplicated on half pixels), then failures on top
    const seen = new Set<number>();
    const ok: string[] = [];
    const bad: string[] = [];
    for (const r of p.records) {
      const x = xOf(r.start);
      const y = yOf(r.total);
      if (r.error === null) {
        const key = Math.round(x * 2) * 4096 + Math.round(y * 2);
        if (seen.has(key)) continue;
        seen.add(key);
        ok.push(`M${x.toFixed(1)} ${y.toFixed(1)}h0`);
      } else {
        bad.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="2.6"/>`);
      }
    }
    // A zero-length path segment with round caps draws a dot: far smaller than one element per dot.
    for (let i = 0; i < ok.length; i += 2000) {
      out.push(`<path d="${ok.slice(i, i + 2000).join('')}" stroke="#2f6db3" stroke-width="2.2" stroke-linecap="round" fill="none"/>`);
    }
    if (bad.length) out.push(`<g fill="#d62020" stroke="#7a0000" stroke-width="0.5">${bad.join('')}</g>`);
    out.push(`</g>`);
  });
  const ly = H - 14;
  out.push(
    `<circle cx="${M.left + 6}" cy="${ly - 4}" r="3" fill="#2f6db3"/><text x="${M.left + 14}" y="${ly}">request (start time, latency incl. TCP connect)</text>`,
    `<circle cx="${M.left + 336}" cy="${ly - 4}" r="3" fill="#d62020"/><text x="${M.left + 344}" y="${ly}">failed request (time to the error)</text>`,
    `<rect x="${M.left + 566}" y="${ly - 10}" width="14" height="12" fill="#f2a33a" fill-opacity="0.3"/><line x1="${M.left + 566}" x2="${M.left + 566}" y1="${ly - 10}" y2="${ly + 2}" stroke="#e08a00"/><text x="${M.left + 586}" y="${ly}">reload command running (line at its start)</text>`,
    `<rect x="${M.left + 856}" y="${ly - 10}" width="14" height="12" fill="#8e44ad" fill-opacity="0.3"/><text x="${M.left + 876}" y="${ly}">plug held (synplug)</text>`,
  );
  out.push(`</svg>`);
  return out.join('\n') + '\n';
}
