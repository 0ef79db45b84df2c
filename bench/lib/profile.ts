/**
 * Summaries of V8 CPU profiles (`node --cpu-prof`): self time per function
 * and per area (our modules by file, node internals, dependencies, GC, idle).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Self time of one function or area, in ms. */
export interface SelfTime {
  name: string;
  ms: number;
}

/** What a profile says. */
export interface ProfileSummary {
  /** profiled span (after node's bootstrap), ms */
  totalMs: number;
  /** top functions by self time */
  functions: SelfTime[];
  /** self time per area: "(idle)" is waiting (for the kernel, for I/O) */
  areas: SelfTime[];
}

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native/builtin)';
  if (url.startsWith('node:')) return 'node internals';
  const m = /\/dist\/(.+)$/.exec(url) ?? /\/src\/(.+)$/.exec(url);
  if (m && !url.includes('node_modules')) return `synplug ${m[1]}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `dependency ${nm[1]}`;
  return basename(url);
}

/**
 * Summarise a .cpuprofile file.
 * @param top how many functions to keep
 */
export function summarizeProfile(path: string, top = 12): ProfileSummary {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // each delta is the time before sample i; attribute it to the sample's node
    self.set(samples[i], (self.get(samples[i]) ?? 0) + (deltas[i] ?? 0));
  }
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const name = url ? `${functionName || '(anonymous)'} ${basename(url)}:${lineNumber + 1}` : functionName || '(anonymous)';
    fns.set(name, (fns.get(name) ?? 0) + us);
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, us]) => ({ name, ms: us / 1000 })).sort((a, b) => b.ms - a.ms);
  return { totalMs: (p.endTime - p.startTime) / 1000, functions: sorted(fns).slice(0, top), areas: sorted(areas) };
}
