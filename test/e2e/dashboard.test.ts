/**
 * What a person sees: headless Chromium (Debian's `chromium`, driven by playwright-core) loads
 * the dashboard at `/` and the `/status` page of `vaultstream start` on a devnet. Every chart
 * must render with data (the page sets data-ready/data-points on each chart), the page must
 * log no console error, have no failed or >= 400 request and fetch nothing from another
 * origin (it works offline), and refresh live on the event stream (GET /v1/events), not by polling. Screenshots go to test-output/screenshots/
 * (git-ignored). Without /usr/bin/chromium (or CHROMIUM_PATH) the suite is skipped by name.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../support/cli.ts';
import { getJson, killServices, type Service, startService, stderrTail } from '../support/devnet-service.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test-output', 'screenshots');
const CHARTS = ['tvl', 'price', 'apy', 'holders', 'fees', 'flows'];

const SUITE = 'dashboard and /status in headless Chromium on the devnet';
const skipReason = existsSync(CHROMIUM)
  ? null
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
const suite = skipReason === null ? describe : describe.skip;
// The default reporter names only the file of a skipped suite; say why here, so a skip is never silent.
if (skipReason !== null) console.warn(`${SUITE} skipped: ${skipReason}`);

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-dashboard-'));
let svc: Service;
let browser: Browser;

afterAll(async () => {
  await browser?.close();
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

/** A page that records every console error, page error, failed, >= 400 or foreign request. */
async function openPage(): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  const requests: string[] = [];
  const origin = new URL(svc.api).origin;
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    requests.push(r.url());
    if (!r.url().startsWith(`${origin}/`) && !r.url().startsWith('data:'))
      problems.push(`request outside the API: ${r.url()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return { page, problems, requests };
}

/** Waits for every chart to be drawn with at least one point; returns points per chart. */
async function chartsReady(page: Page): Promise<Record<string, number>> {
  await page.waitForFunction(
    (names) =>
      names.every(
        (n) => document.querySelector(`figure[data-chart="${n}"]`)?.getAttribute('data-ready') === 'true',
      ),
    CHARTS,
    { timeout: 60_000 },
  );
  return page.$$eval('figure[data-chart]', (figs) =>
    Object.fromEntries(
      figs.map((f) => [f.getAttribute('data-chart'), Number(f.getAttribute('data-points'))]),
    ),
  );
}

suite(SUITE, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // Ten days of history: navApy needs a settled day with a close 7 days earlier. Live ticks stay on,
    // 10 s apart: the consumers drain between two even on a loaded machine.
    svc = await startService(join(dir, 'data'), { backfillDays: '10', liveIntervalMs: '10000' });
    // The history is in the views once every chain is live and the consumers have no lag.
    await vi.waitFor(
      async () => {
        const s = await getJson(svc, '/status');
        const phases = (s.ingest?.evm ?? []).map((p: any) => p.phase);
        const drained = Object.values(s.consumer.lag).every((n) => n === 0);
        expect({ phases, drained }, `the backfill in the views; ${stderrTail(svc)}`).toEqual({
          phases: ['live', 'live', 'live'],
          drained: true,
        });
      },
      { timeout: 240_000, interval: 300 },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 420_000);

  it('/ draws every chart of the first vault with the API data, and the pipeline', async () => {
    const { page, problems, requests } = await openPage();
    await page.goto(`${svc.api}/`);
    const points = await chartsReady(page);
    for (const c of CHARTS) expect(points[c], `${c} points`).toBeGreaterThan(0);

    // The charts hold what the API answers: one TVL and one price point per day of history.
    const slug = await page.$eval('#vault', (s) => (s as HTMLSelectElement).value);
    expect(slug).toBe('ndev0');
    const perf = (await getJson(svc, `/v1/vaults/${slug}/performance-history`)).data.history;
    expect(points.tvl).toBe(perf.filter((d: any) => d.vault.tvl !== null).length);
    expect(points.price).toBe(perf.length);
    const navDays = perf.filter((d: any) => d.vault.navApy?.rolling7d != null).length;
    expect(navDays, 'settled days with navApy 7 d').toBeGreaterThan(0);
    expect(points.apy).toBeGreaterThanOrEqual(navDays);
    // Every vault in the selector, the vault's KPIs, its recent transactions.
    const options = await page.$$eval('#vault option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options.sort()).toEqual(['ndev0', 'ndev1', 'ndev2']);
    expect(await page.locator('.kpi').count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('#transactions tbody tr').count()).toBeGreaterThan(0);

    // The pipeline section (from /status as HTML): a progress bar per chain.
    await page.waitForSelector('#pipeline-slot #pipeline tr[data-chain]');
    const chains = await page.$$eval(
      '#pipeline-slot tr[data-chain] [role=progressbar]',
      (bars) => bars.length,
    );
    expect(chains).toBe(3);

    // uPlot came from this server, not a CDN.
    expect(requests.some((u) => u.endsWith('/dashboard/assets/uPlot.iife.min.js'))).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'dashboard-ndev0.png'), fullPage: true });

    // Live without polling: the page follows GET /v1/events, and a version event naming the vault
    // makes it read the vault again (the "updated" stamp moves, /status is read again).
    expect(requests.filter((u) => new URL(u).pathname === '/v1/events').length).toBe(1);
    await page.waitForFunction(() => document.body.dataset.live === 'open', undefined, { timeout: 30_000 });
    const stamp = await page.textContent('#updated');
    const statusReads = requests.filter((u) => u.endsWith('/status')).length;
    const version = await page.evaluate(() => document.body.dataset.version ?? '');
    // First the next version event, then what it makes the page do (the stamp can also move on
    // its own, with the pipeline's refresh, so it alone proves nothing).
    await page.waitForFunction((v) => (document.body.dataset.version ?? '') !== v, version, {
      timeout: 30_000,
    });
    await page.waitForFunction((s) => document.querySelector('#updated')?.textContent !== s, stamp, {
      timeout: 30_000,
    });
    await vi.waitFor(
      () => expect(requests.filter((u) => u.endsWith('/status')).length).toBeGreaterThan(statusReads),
      { timeout: 30_000, interval: 100 },
    );
    await page.screenshot({ path: join(SHOTS, 'dashboard-live.png'), fullPage: true });

    // The selector switches every chart to another vault.
    await page.selectOption('#vault', 'ndev2');
    const points2 = await chartsReady(page);
    const perf2 = (await getJson(svc, '/v1/vaults/ndev2/performance-history')).data.history;
    expect(points2.price).toBe(perf2.length);
    expect(new URL(page.url()).searchParams.get('vault')).toBe('ndev2');
    await page.screenshot({ path: join(SHOTS, 'dashboard-ndev2.png'), fullPage: true });

    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('every y-axis label is whole and the holders chart has a line for every chain with holders', async () => {
    // Solana (chain 101) holds shares of ndev0 once the devnet's first Solana transfers are in.
    await vi.waitFor(
      async () => {
        const top = (await getJson(svc, '/v1/vaults/holders?chainId=101')).data;
        expect(
          top.some((v: any) => v.holders.some((h: any) => h.chainId === 101)),
          'Solana holders',
        ).toBe(true);
      },
      { timeout: 60_000, interval: 500 },
    );
    const { page, problems } = await openPage();
    // The devnet's vaults hold a few million dollars; a real one holds billions: the page gets
    // the API's TVL history times 10,000 ("$2,000,000,000" labels), the rest as the API answers.
    await page.route('**/performance-history', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      for (const d of body.data.history) if (d.vault.tvl != null) d.vault.tvl *= 10_000;
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(`${svc.api}/`);
    await chartsReady(page);
    // A label wider than its axis is drawn from x < 0: its first digits are cut ("000,000" for
    // "$12,000,000") and the rest touches the canvas's left edge. Nothing else is drawn there.
    const leftEdge = await page.$$eval('figure[data-chart] canvas', (canvases) =>
      canvases.map((c) => {
        const canvas = c as HTMLCanvasElement;
        const { data } = canvas.getContext('2d')!.getImageData(0, 0, 2, canvas.height);
        let inked = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) inked++;
        return [canvas.closest('figure')?.getAttribute('data-chart'), inked] as const;
      }),
    );
    expect(leftEdge.length).toBe(CHARTS.length);
    for (const [chart, inked] of leftEdge) expect(inked, `${chart}: pixels drawn at the left edge`).toBe(0);
    // Scaled, the TVL axis labels run into the billions.
    const tvl = (await getJson(svc, '/v1/vaults/ndev0/performance-history')).data.history;
    expect(Math.max(...tvl.map((d: any) => d.vault.tvl ?? 0)), 'a TVL above $100,000').toBeGreaterThan(
      100_000,
    );

    // The holders chart has the Solana line, with at least one point.
    const series = JSON.parse(
      (await page.getAttribute('figure[data-chart="holders"]', 'data-series')) ?? '{}',
    ) as Record<string, number>;
    expect(Object.keys(series)).toEqual(expect.arrayContaining(['all chains', 'solana 101', 'plume 98866']));
    expect(series['solana 101'], 'points on the Solana line').toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'dashboard-axes-holders.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('/docs is the interactive reference: "try it" on GET /vaults answers from this service', async () => {
    const { page, problems, requests } = await openPage();
    await page.goto(`${svc.api}/docs`);
    // Swagger UI names an operation's block operations-<tag>-<operationId>.
    const op = page.locator('#operations-vaults-listVaults');
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await expect.poll(() => status.textContent(), { timeout: 30_000 }).toMatch(/^\s*200/);
    const shown = JSON.parse(
      (await op.locator('.live-responses-table .microlight').first().textContent()) ?? '',
    );
    const api = await getJson(svc, '/v1/vaults');
    expect(shown.data.map((v: any) => v.slug).sort()).toEqual(api.data.map((v: any) => v.slug).sort());
    // The page and its assets, the document and the request tried: all from this service.
    expect(requests.some((u) => u.endsWith('/v1/openapi.json'))).toBe(true);
    expect(requests.some((u) => new URL(u).pathname === '/v1/vaults')).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'docs-try-it.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('/status is a page with progress bars and units for a browser, JSON for JSON clients', async () => {
    const { page, problems } = await openPage();
    const res = await page.goto(`${svc.api}/status`);
    expect(res?.headers()['content-type']).toMatch(/^text\/html/);
    const json = await getJson(svc, '/status');
    const evm: any[] = json.ingest.evm;
    const rows = await page.$$eval('#pipeline tr[data-chain]', (trs) =>
      trs.map((tr) => ({
        chain: Number(tr.getAttribute('data-chain')),
        total: Number(tr.querySelector('[role=progressbar]')?.getAttribute('aria-valuemax')),
        text: tr.textContent ?? '',
      })),
    );
    // One row per followed or stored chain: the EVM chains with their backfill bars, and Solana (101).
    const chains = new Set([
      ...evm.map((p) => p.chainId),
      ...json.chains.map((c: { chainId: number }) => c.chainId),
    ]);
    expect(chains.has(101)).toBe(true);
    expect(rows.map((r) => r.chain).sort()).toEqual([...chains].sort());
    for (const r of rows.filter((row) => evm.some((p) => p.chainId === row.chain))) {
      expect(r.total, `chain ${r.chain} blocks total`).toBeGreaterThan(0);
      expect(r.text).toMatch(/\d[\d,]* \/ [\d,]+ blocks/);
      expect(r.text).toMatch(/blocks\/s/);
      expect(r.text).toMatch(/\d+ s/); // lag and ETA in seconds
    }
    const topics = await page.$$eval('#pipeline tr[data-topic]', (trs) =>
      trs.map((t) => t.getAttribute('data-topic')),
    );
    expect(topics.sort()).toEqual(Object.keys(json.consumer.lag).sort());
    // The embedded bus's lag is in bytes (its offsets are byte positions), and the page says so.
    expect(json.consumer.lagUnit).toBe('bytes');
    expect(await page.textContent('#pipeline')).toMatch(/\d[\d,]* bytes/);
    await page.screenshot({ path: join(SHOTS, 'status.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();

    // JSON clients get the JSON as before: no Accept, Accept: application/json, */*.
    for (const accept of [undefined, 'application/json', '*/*']) {
      const r = await fetch(`${svc.api}/status`, { headers: accept ? { accept } : {} });
      expect(r.headers.get('content-type'), `Accept ${accept}`).toMatch(/^application\/json/);
      expect(Object.keys(await r.json())).toEqual([
        'store',
        'chains',
        'consumer',
        'rows',
        'metrics',
        'ingest',
      ]);
    }
    const forced = await fetch(`${svc.api}/status?format=json`, { headers: { accept: 'text/html' } });
    expect(forced.headers.get('content-type')).toMatch(/^application\/json/);
  }, 60_000);
});
