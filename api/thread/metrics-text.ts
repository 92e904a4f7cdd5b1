/**
 * /metrics when the API has its own thread: that thread's registry (the API's request and cache
 * metrics, its event-loop delay and GC pauses labelled `thread="api"`) and the main thread's
 * (ingest, consumers, settle, the process's CPU and memory, the main loop's delay and GC) are
 * served as one exposition. A metric both registries hold (the loop histograms) is one family:
 * its HELP and TYPE once, the series of both under it (their labels differ).
 */

/** One exposition of `texts` (Prometheus text format), families merged by name, in first-seen order. */
export function mergeExpositions(texts: string[]): string {
  const families = new Map<string, { head: string[]; samples: string[] }>();
  for (const text of texts) {
    let current: { head: string[]; samples: string[] } | undefined;
    for (const line of text.split('\n')) {
      if (!line) continue;
      const head = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (head) {
        const name = head[2];
        const known = families.get(name);
        current = known ?? { head: [], samples: [] };
        if (!known) families.set(name, current);
        if (current.head.length < 2 && !current.head.some((h) => h.startsWith(`# ${head[1]} `)))
          current.head.push(line);
        continue;
      }
      if (line.startsWith('#')) continue;
      if (!current) {
        current = { head: [], samples: [] };
        families.set(`\u0000${families.size}`, current);
      }
      current.samples.push(line);
    }
  }
  return `${[...families.values()].map((f) => [...f.head, ...f.samples].join('\n')).join('\n\n')}\n`;
}
