/**
 * The results part of BENCHMARKS.md, generated from bench/results/latest.json (the newest run of
 * every benchmark): one table per benchmark with the date, the load average before and after it
 * and the command that reruns it. `npm run bench` rewrites it after a run into bench/results; the
 * prose above the marker is written by hand (test/unit/benchmarks-doc.test.ts keeps the two in step).
 */
import { readFileSync, writeFileSync } from 'node:fs';

export const RESULTS_MARKER = '<!-- results: generated from bench/results/latest.json by npm run bench -->';

interface Latest {
  scripts: {
    name: string;
    file: string;
    date: string;
    seconds?: number;
    loadavg1m?: number[];
    note?: string;
    error?: string;
  }[];
  rows: {
    bench: string;
    workload: string;
    value: unknown;
    unit?: string;
    target?: string;
    meets?: boolean | null;
  }[];
}

const cell = (v: unknown) =>
  String(v ?? '')
    .replaceAll('|', '\\|')
    .replaceAll('\n', ' ');

/** The generated results section (everything after the marker). */
export function resultsMarkdown(latest: Latest): string {
  const out = ['## Results', ''];
  for (const s of latest.scripts) {
    const load = s.loadavg1m?.length ? `, load average ${s.loadavg1m.join(' → ')}` : '';
    out.push(`### ${s.name}`, '');
    out.push(
      `\`npm run bench -- --only ${s.name}\` (${s.file}); run ${s.date.slice(0, 16).replace('T', ' ')} UTC${load}.`,
    );
    if (s.note) out.push(`Note: ${s.note}.`);
    if (s.error) out.push(`Failed: ${s.error}.`);
    out.push('', '| workload | value | target | meets |', '|---|---|---|---|');
    for (const r of latest.rows.filter((x) => x.bench === s.name)) {
      const meets = r.meets === true ? 'yes' : r.meets === false ? '**no**' : '';
      const target = r.target === 'none' ? '' : r.target;
      out.push(
        `| ${cell(r.workload)} | ${cell(`${r.value}${r.unit ? ` ${r.unit}` : ''}`)} | ${cell(target)} | ${meets} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

/** BENCHMARKS.md with its results section regenerated from `latestPath`. */
export function benchmarksDoc(docPath: string, latestPath: string): string {
  const doc = readFileSync(docPath, 'utf8');
  const at = doc.indexOf(RESULTS_MARKER);
  if (at < 0) throw new Error(`${docPath} has no results marker`);
  const latest = JSON.parse(readFileSync(latestPath, 'utf8')) as Latest;
  return `${doc.slice(0, at + RESULTS_MARKER.length)}\n\n${resultsMarkdown(latest)}`;
}

export function writeBenchmarksDoc(docPath: string, latestPath: string): void {
  writeFileSync(docPath, benchmarksDoc(docPath, latestPath));
}

// `npx tsx bench/markdown.ts` rewrites BENCHMARKS.md; `--check` exits 1 when it is stale.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const root = new URL('..', import.meta.url).pathname;
  const doc = `${root}BENCHMARKS.md`;
  const latest = `${root}bench/results/latest.json`;
  if (process.argv.includes('--check')) {
    if (readFileSync(doc, 'utf8') !== benchmarksDoc(doc, latest)) {
      console.error('BENCHMARKS.md is stale: npx tsx bench/markdown.ts');
      process.exitCode = 1;
    }
  } else writeBenchmarksDoc(doc, latest);
}
