/**
 * The layers of the code, enforced: every import of every .ts file in the repository
 * (node_modules and dist excepted) is parsed, and a file may import only its own folder or
 * a folder of a lower layer (docs/architecture.md, Folders):
 *
 *   0 core                    config, errors, logging, metrics: imports nothing above it
 *   1 schemas, store          the event contracts; the one ClickHouse client
 *   2 bus, views              the log or Kafka; the SQL migrations and their runner
 *   3 ingest, streams, api,   the roles, and the devnet (its chains and simulator, which
 *     devnet                  `vaultstream start` runs beside them): none imports another
 *   4 cli                     the command and the composition root (cli/wiring.ts)
 *   5 bench, test             above everything, and independent of each other
 *
 * Folders of one layer never import each other: the API never imports streams or ingest.
 * The store knows nothing of HTTP (no Koa), the HTTP kit (api/http) no endpoint, api/read
 * no request, and no file imports itself through a cycle.
 * A failure names the file, the line and the import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', 'data', 'test-output']);

const LAYERS: Record<string, number> = {
  core: 0,
  rpc: 1, // the EVM and Solana JSON-RPC transport: HTTP, batching, pacing, faults
  schemas: 1,
  store: 1,
  bus: 2,
  views: 2,
  ingest: 3,
  streams: 3,
  api: 3,
  devnet: 3,
  cli: 4,
  bench: 5,
  test: 5,
  '.': 6, // vitest.config.ts
};

/** Imports (a package, or a file by its repository path) that files under `from` must not make, and why. */
const FORBIDDEN: { from: string; imports: RegExp; why: string }[] = [
  { from: 'store/', imports: /^(koa|koa-.*|@koa\/.*)$/, why: 'the store knows nothing of HTTP' },
  { from: 'api/http/', imports: /^api\/(read|handlers)\//, why: 'the HTTP kit knows no endpoint' },
  {
    from: 'api/read/',
    imports: /^(koa|koa-.*|@koa\/.*|api\/handlers\/.*)$/,
    why: "api/read reads the views; the request is the handlers' job",
  },
];

/**
 * Violations found today in files this change does not own, each reported to its owner. The
 * list must match what is found exactly: a fixed one is removed from here, a new one fails.
 */
const KNOWN: string[] = [];

interface Import {
  spec: string;
  line: number;
}

type Token = { kind: 'id' | 'str' | 'num' | 'punct'; text: string; line: number };

const KEYWORDS_BEFORE_REGEX = new Set(
  'return typeof case do else in of new delete void throw instanceof yield await'.split(' '),
);

/** JavaScript/TypeScript tokens, comments dropped; template literals are skipped whole. */
function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  const advanceTo = (end: number) => {
    for (let k = i; k < end; k++) if (src[k] === '\n') line++;
    i = end;
  };
  const skipTemplate = () => {
    i++; // the opening backtick
    while (i < src.length && src[i] !== '`') {
      if (src[i] === '\\') advanceTo(i + 2);
      else if (src[i] === '$' && src[i + 1] === '{') {
        advanceTo(i + 2);
        skipCode();
      } else advanceTo(i + 1);
    }
    i++;
  };
  // Inside `${...}`: code up to the matching brace (its strings and templates skipped).
  const skipCode = () => {
    let depth = 1;
    while (i < src.length && depth > 0) {
      const c = src[i];
      if (c === '{') depth++;
      else if (c === '}') depth--;
      if (c === '`') skipTemplate();
      else if (c === '"' || c === "'") skipString(c);
      else advanceTo(i + 1);
    }
  };
  const skipString = (q: string): string => {
    let text = '';
    let j = i + 1;
    while (j < src.length && src[j] !== q && src[j] !== '\n') {
      if (src[j] === '\\') {
        text += src[j + 1];
        j += 2;
      } else text += src[j++];
    }
    advanceTo(j + 1);
    return text;
  };
  const regexAllowed = () => {
    const prev = out[out.length - 1];
    if (!prev) return true;
    if (prev.kind === 'id') return KEYWORDS_BEFORE_REGEX.has(prev.text);
    if (prev.kind !== 'punct') return false;
    return !/[)\]}]/.test(prev.text);
  };
  while (i < src.length) {
    const c = src[i];
    const start = line;
    if (c === '\n' || c === ' ' || c === '\t' || c === '\r') advanceTo(i + 1);
    else if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      advanceTo(end < 0 ? src.length : end);
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      advanceTo(end < 0 ? src.length : end + 2);
    } else if (c === '"' || c === "'") out.push({ kind: 'str', text: skipString(c), line: start });
    else if (c === '`') skipTemplate();
    else if (c === '/' && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      while (j < src.length && src[j] !== '\n' && (inClass || src[j] !== '/')) {
        if (src[j] === '\\') j++;
        else if (src[j] === '[') inClass = true;
        else if (src[j] === ']') inClass = false;
        j++;
      }
      while (/[a-z]/.test(src[j + 1] ?? '')) j++;
      advanceTo(j + 1);
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[\w$]+/.exec(src.slice(i, i + 200))!;
      out.push({ kind: 'id', text: m[0], line: start });
      advanceTo(i + m[0].length);
    } else if (/[0-9]/.test(c)) {
      const m = /^[\w.]+/.exec(src.slice(i, i + 100))!;
      out.push({ kind: 'num', text: m[0], line: start });
      advanceTo(i + m[0].length);
    } else {
      out.push({ kind: 'punct', text: c, line: start });
      advanceTo(i + 1);
    }
  }
  return out;
}

/** The module specifiers `source` imports: static, side-effect, re-export and literal `import()`. */
function importsOf(source: string): Import[] {
  const t = tokenize(source);
  const out: Import[] = [];
  const is = (k: number, text: string) => t[k]?.text === text && t[k].kind !== 'str';
  // From `k`, bindings (identifiers, `type`, `as`, braces, commas, `*`) up to `from '<spec>'`.
  const fromClause = (k: number): string | undefined => {
    for (; k < t.length; k++) {
      if (is(k, 'from') && t[k + 1]?.kind === 'str') return t[k + 1].text;
      if (t[k].kind !== 'id' && !['{', '}', ',', '*'].includes(t[k].text)) return undefined;
    }
    return undefined;
  };
  for (let k = 0; k < t.length; k++) {
    if (t[k].kind !== 'id' || is(k - 1, '.')) continue;
    let spec: string | undefined;
    if (t[k].text === 'import') {
      if (is(k + 1, '(') && t[k + 2]?.kind === 'str' && is(k + 3, ')')) spec = t[k + 2].text;
      else if (t[k + 1]?.kind === 'str') spec = t[k + 1].text;
      else if (t[k + 1]?.kind === 'id' || is(k + 1, '{') || is(k + 1, '*')) spec = fromClause(k + 1);
    } else if (t[k].text === 'export') {
      const first = is(k + 1, 'type') ? k + 2 : k + 1;
      if (is(first, '{') || is(first, '*')) spec = fromClause(first);
    }
    if (spec !== undefined) out.push({ spec, line: t[k].line });
  }
  return out;
}

/** Every .ts file under `dir`, relative to ROOT with forward slashes. */
function sourceFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || SKIP.has(e.name)) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(path));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      out.push(relative(ROOT, path).split(sep).join('/'));
  }
  return out;
}

/** The repository-relative target of a relative specifier, else undefined (a package). */
function target(file: string, spec: string): string | undefined {
  return spec.startsWith('.') ? posix.normalize(posix.join(posix.dirname(file), spec)) : undefined;
}

const folderOf = (path: string) => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

/** Layer and package violations of `graph` (file to its imports), one line each. */
function layerViolations(graph: Map<string, Import[]>): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    const from = folderOf(file);
    const rank = LAYERS[from];
    if (rank === undefined) {
      out.push(`${file}: folder ${from}/ has no layer (add it to LAYERS in test/unit/layers.test.ts)`);
      continue;
    }
    for (const imp of imports) {
      const at = `${file}:${imp.line} imports '${imp.spec}'`;
      const to = target(file, imp.spec);
      for (const rule of FORBIDDEN)
        if (file.startsWith(rule.from) && rule.imports.test(to ?? imp.spec)) out.push(`${at}: ${rule.why}`);
      if (to === undefined) continue;
      const folder = folderOf(to);
      if (folder === from) continue;
      const toRank = LAYERS[folder];
      if (toRank === undefined) out.push(`${at}: ${to} is in ${folder}/, which has no layer`);
      else if (toRank > rank)
        out.push(`${at}: ${from}/ (layer ${rank}) imports ${folder}/ above it (layer ${toRank})`);
      else if (toRank === rank)
        out.push(`${at}: ${from}/ and ${folder}/ are peers (layer ${rank}): neither imports the other`);
    }
  }
  return out;
}

/** The import cycles among the files of `graph` (strongly connected components of more than one file, or a self-import). */
function importCycles(graph: Map<string, Import[]>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, imports] of graph)
    edges.set(
      file,
      imports.map((i) => target(file, i.spec)).filter((f): f is string => f !== undefined && graph.has(f)),
    );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || edges.get(v)!.includes(v)) cycles.push(scc.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('the import parser', () => {
  it('finds every form of import, and nothing in comments, strings, templates or regexes', () => {
    const src = [
      "import a from './a.ts';",
      "import type { B } from '../b.ts';",
      "import * as c from 'c-pkg';",
      "import './side.ts';",
      "export { d } from './d.ts';",
      "export type { E } from './e.ts';",
      "export * from './f.ts';",
      "const g = await import('./g.ts');",
      'type H = typeof import("./h.ts");',
      "// import x from './comment.ts';",
      "/* export * from './block.ts'; */",
      'const s = "import y from \'./string.ts\'";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the parser's input holds a template literal
      "const tpl = `import z from './template.ts' ${import.meta.url} ${`nested ${'x'}`}`;",
      "const re = /from '.\\/regex.ts'/;",
      "const n = 4 / 2; export const from = 'not-a-module';",
      'export { local };',
      "import {\n  j,\n  type K,\n} from './multi.ts';",
    ].join('\n');
    expect(importsOf(src)).toEqual([
      { spec: './a.ts', line: 1 },
      { spec: '../b.ts', line: 2 },
      { spec: 'c-pkg', line: 3 },
      { spec: './side.ts', line: 4 },
      { spec: './d.ts', line: 5 },
      { spec: './e.ts', line: 6 },
      { spec: './f.ts', line: 7 },
      { spec: './g.ts', line: 8 },
      { spec: './h.ts', line: 9 },
      { spec: './multi.ts', line: 17 },
    ]);
  });

  it('the checks report a layer breach, peers, forbidden imports and a cycle', () => {
    const graph = new Map<string, Import[]>([
      ['core/a.ts', [{ spec: '../cli/wiring.ts', line: 3 }]],
      ['api/b.ts', [{ spec: '../streams/c.ts', line: 7 }]],
      ['store/d.ts', [{ spec: 'koa', line: 1 }]],
      ['streams/c.ts', [{ spec: './e.ts', line: 1 }]],
      ['streams/e.ts', [{ spec: './c.ts', line: 2 }]],
      ['cli/wiring.ts', [{ spec: '../store/d.ts', line: 1 }]],
      ['api/read/f.ts', [{ spec: '../handlers/g.ts', line: 4 }]],
    ]);
    expect(layerViolations(graph)).toEqual([
      "core/a.ts:3 imports '../cli/wiring.ts': core/ (layer 0) imports cli/ above it (layer 4)",
      "api/b.ts:7 imports '../streams/c.ts': api/ and streams/ are peers (layer 3): neither imports the other",
      "store/d.ts:1 imports 'koa': the store knows nothing of HTTP",
      "api/read/f.ts:4 imports '../handlers/g.ts': api/read reads the views; the request is the handlers' job",
    ]);
    expect(importCycles(graph)).toEqual([['streams/c.ts', 'streams/e.ts']]);
  });
});

describe('the layers of the repository', () => {
  const graph = new Map(sourceFiles().map((f) => [f, importsOf(readFileSync(join(ROOT, f), 'utf8'))]));

  it('parses the whole repository', () => {
    expect(graph.has('core/config.ts')).toBe(true);
    expect(graph.has('cli/wiring.ts')).toBe(true);
    expect([...graph.keys()].some((f) => f.startsWith('node_modules/') || f.startsWith('dist/'))).toBe(false);
    // A parser that lost track would find few imports: config.ts has its settings' and zod's.
    expect(graph.get('core/config.ts')!.map((i) => i.spec)).toContain('./settings/registry.ts');
  });

  it('each file imports only its own folder or a lower layer, and nothing its folder forbids', () => {
    expect(layerViolations(graph).filter((v) => !KNOWN.includes(v))).toEqual([]);
  });

  it('no import cycles among files', () => {
    expect(
      importCycles(graph)
        .map((c) => `cycle: ${c.join(' -> ')}`)
        .filter((v) => !KNOWN.includes(v)),
    ).toEqual([]);
  });

  it('every known violation still exists (remove the fixed ones from KNOWN)', () => {
    const found = new Set([
      ...layerViolations(graph),
      ...importCycles(graph).map((c) => `cycle: ${c.join(' -> ')}`),
    ]);
    expect(KNOWN.filter((v) => !found.has(v))).toEqual([]);
  });
});
