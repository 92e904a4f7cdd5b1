/**
 * `/status` as a page: per chain a progress bar (blocks done of total) with head, next block,
 * blocks/s, ETA, stored watermark and its lag in seconds, reorgs, RPC wait and the last error;
 * the Solana followers, consumer lag per topic, raw row counts and migrations. The same
 * object the JSON clients get, only drawn. The dashboard at `/` embeds `<main id="pipeline">`.
 */

import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { PipelineStatus } from '../status.ts';

export type StatusBody = PipelineStatus & { ingest: Record<string, unknown> | null };

interface EvmProgress {
  chainId: number;
  name?: string;
  phase?: string;
  head?: number;
  next?: number;
  blocksDone?: number;
  blocksTotal?: number;
  blocksPerSecond?: number;
  eventsPublished?: number;
  etaSeconds?: number;
  reorgs?: number;
  blocksRetracted?: number;
  rpcWaitMs?: number;
  lastError?: string;
}

const esc = (v: unknown): string =>
  String(v ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const int = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US');

/** Seconds as "42 s", "3 min 5 s", "2 h 10 min". */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const h = Math.floor(s / 3600);
  if (h < 48) return `${h} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function bar(done: number, total: number, label: string): string {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0;
  return `<div class="bar" role="progressbar" aria-valuemin="0" aria-valuenow="${esc(done)}" aria-valuemax="${esc(total)}" aria-label="${esc(label)}"><span style="width:${pct.toFixed(1)}%"></span><em>${pct.toFixed(pct >= 99.95 || pct === 0 ? 0 : 1)}%</em></div>`;
}

function chainRows(body: StatusBody): string {
  const evm = (Array.isArray(body.ingest?.evm) ? body.ingest.evm : []) as EvmProgress[];
  const marks = new Map(body.chains.map((c) => [c.chainId, c]));
  const ids = [...new Set([...evm.map((e) => e.chainId), ...body.chains.map((c) => c.chainId)])];
  if (ids.length === 0) return '<tr><td colspan="11" class="muted">no chain ingested yet</td></tr>';
  return ids
    .map((id) => {
      const p = evm.find((e) => e.chainId === id);
      const m = marks.get(id);
      const done = p?.blocksDone ?? 0;
      const total = p?.blocksTotal ?? 0;
      const phase = p?.phase ?? (id === SOLANA_CHAIN_ID ? 'solana' : 'stored only');
      const error = p?.lastError
        ? `<span class="err">${esc(p.lastError)}</span>`
        : '<span class="muted">none</span>';
      return `<tr data-chain="${esc(id)}">
  <th scope="row">${esc(p?.name ?? `chain ${id}`)} <small>${esc(id)}</small></th>
  <td><span class="phase phase-${esc(phase.replace(/\W+/g, '-'))}">${esc(phase)}</span></td>
  <td class="progress">${p ? bar(done, total, `chain ${id} backfill`) : ''}<small>${p ? `${int(done)} / ${int(total)} blocks` : ''}</small></td>
  <td class="num">${int(p?.head)}</td>
  <td class="num">${int(m?.blockNumber)}</td>
  <td class="num">${m ? `${int(m.lagSeconds)} s` : '–'}</td>
  <td class="num">${p?.blocksPerSecond === undefined ? '–' : `${p.blocksPerSecond.toFixed(1)} blocks/s`}</td>
  <td class="num">${p ? duration(p.etaSeconds) : '–'}</td>
  <td class="num">${p ? `${int(p.reorgs)} <small>(${int(p.blocksRetracted)} blocks retracted)</small>` : '–'}</td>
  <td class="num">${p?.rpcWaitMs === undefined ? '–' : duration(p.rpcWaitMs / 1000)}</td>
  <td>${error}</td>
</tr>`;
    })
    .join('\n');
}

function consumerRows(body: StatusBody): string {
  if (!body.consumer) return '<tr><td colspan="3" class="muted">no consumer in this process</td></tr>';
  const entries = Object.entries(body.consumer.lag);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return entries
    .map(
      ([topic, n]) =>
        `<tr data-topic="${esc(topic)}"><th scope="row">${esc(topic)}</th><td class="num">${int(n)} ${body.consumer?.lagUnit === 'bytes' ? 'bytes' : 'records'}</td><td class="lagbar">${n > 0 ? bar(n, max, `${topic} lag`) : '<span class="ok">caught up</span>'}</td></tr>`,
    )
    .join('\n');
}

function solanaBlock(body: StatusBody): string {
  const followers = Array.isArray(body.ingest?.solana)
    ? (body.ingest.solana as Record<string, unknown>[])
    : [];
  const flows = body.ingest?.mintFlows;
  const items = followers.map(
    (f) =>
      `<li>${Object.entries(f)
        .map(([k, v]) => `${esc(k)}: <b>${esc(typeof v === 'object' ? JSON.stringify(v) : v)}</b>`)
        .join(', ')}</li>`,
  );
  return `<p>Solana followers: ${followers.length ? `<ul>${items.join('')}</ul>` : '<span class="muted">none</span>'} · open mint flows: <b>${esc(flows ?? 0)}</b></p>`;
}

/** The `<main id="pipeline">` fragment. */
export function pipelineFragment(body: StatusBody): string {
  const rows = Object.entries(body.rows)
    .map(([t, n]) => `<tr><th scope="row">${esc(t)}</th><td class="num">${int(n)} rows</td></tr>`)
    .join('');
  return `<main id="pipeline">
<h2>Chains</h2>
<div class="scroll"><table class="chains">
<thead><tr><th>chain</th><th>phase</th><th>backfill</th><th>head (block)</th><th>stored watermark (block)</th><th>lag</th><th>speed</th><th>ETA</th><th>reorgs</th><th>RPC wait</th><th>last error</th></tr></thead>
<tbody>
${chainRows(body)}
</tbody></table></div>
${solanaBlock(body)}
<h2>Consumer lag per topic${body.consumer ? ` <small>(group ${esc(body.consumer.groupId)})</small>` : ''}</h2>
<table class="topics"><tbody>
${consumerRows(body)}
</tbody></table>
<details><summary>Stored rows per raw table, migrations (${esc(body.store.kind)}, database ${esc(body.store.database)})</summary>
<table class="rows"><tbody>${rows}</tbody></table>
<p>migrations: ${body.store.migrations.map(esc).join(', ')}</p>
</details>
</main>`;
}

/** The whole `/status` page; it reloads itself every 5 s. */
export function statusPage(body: StatusBody, now = new Date()): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="5">
<title>vaultstream status</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
</head><body class="status">
<header><h1>vaultstream pipeline</h1><span class="muted">as of ${esc(now.toISOString().replace('T', ' ').slice(0, 19))} UTC · refreshes every 5 s</span>
<nav><a href="/">dashboard</a> <a href="/status?format=json">JSON</a> <a href="/docs">API docs</a></nav></header>
${pipelineFragment(body)}
</body></html>
`;
}
