/*
 * The dashboard page's script (plain browser JavaScript, no build step): reads the API's own
 * endpoints, and reads them again when the API's event stream (GET /v1/events) says the data
 * changed, instead of polling: a `version` event naming the vault (or not knowing what changed)
 * reloads it, an `activity` event of the vault shows its row at once, a `reset` reloads
 * everything. Each figure is drawn by charts.js (loaded before it).
 */
(() => {
  // Reloads after a change at most this often (a live chain makes a data version about every second).
  const RELOAD_GAP_MS = 2_000;
  // The pipeline section (/status) with the data versions, and this often without them: a chain that
  // stopped moves no data, and its state is what the section shows.
  const PIPELINE_IDLE_MS = 30_000;
  const CHAIN_NAMES = { 1: 'ethereum', 56: 'bsc', 98866: 'plume', 101: 'solana' };

  const $ = (sel) => document.querySelector(sel);
  const select = $('#vault');
  let vaults = [];
  let loadingVault = false;
  let loadAgain = false;

  // The API admits a few uncached loads per client at once (api.cache.maxUncachedPerClient, 4),
  // and with live data most loads are uncached: one request in flight at a time.
  const queue = [];
  let inFlight = 0;
  function getJson(path, accept = 'application/json') {
    return new Promise((resolve, reject) => {
      queue.push({ path, accept, resolve, reject });
      pump();
    });
  }
  function pump() {
    while (inFlight < 1 && queue.length) {
      const job = queue.shift();
      inFlight++;
      // no-store: the API's responses allow stale-while-revalidate, and the browser's own background
      // revalidations would be requests outside this queue (beyond the per-client limit: 429).
      fetch(job.path, { headers: { Accept: job.accept }, cache: 'no-store' })
        .then(async (res) => {
          const text = await res.text();
          if (!res.ok) throw new Error(`${job.path}: HTTP ${res.status} ${text.slice(0, 200)}`);
          return job.accept === 'application/json' ? JSON.parse(text) : text;
        })
        .then(job.resolve, job.reject)
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  }

  function showError(err) {
    const el = $('#error');
    el.hidden = !err;
    el.textContent = err ? `could not load: ${err.message ?? err}` : '';
  }

  const { COLORS, usd, num, pct, escapeHtml, draw } = window.vsCharts;

  function renderKpis(v) {
    const items = [
      ['TVL', usd(v.tvl)],
      ['holders', num(v.numHolders, 0)],
      ['volume 24 h', usd(v.volume24h)],
      ['navApy SEC 30 d', pct(v.sec30d)],
    ];
    $('#kpis').innerHTML = items
      .map(([k, val]) => `<div class="kpi"><b>${escapeHtml(val)}</b><span>${escapeHtml(k)}</span></div>`)
      .join('');
  }

  function renderPerformance(history) {
    const days = [...history].sort((a, b) => a.day - b.day);
    const xs = days.map((d) => d.day);
    draw('tvl', xs, [{ label: 'TVL', values: days.map((d) => d.vault.tvl), fill: 'rgba(47,111,219,0.12)' }], {
      fmt: usd,
      axis: (t) => usd(t),
    });
    draw('price', xs, [{ label: 'share price', values: days.map((d) => d.vault.price) }], {
      fmt: (v) => num(v, 6),
      axis: (t) => num(t, 5),
    });
    const apy = (d, key, k) => d.vault[key]?.[k] ?? null;
    draw(
      'apy',
      xs,
      [
        { label: 'navApy 7 d', values: days.map((d) => apy(d, 'navApy', 'rolling7d')) },
        { label: 'navApy 30 d', values: days.map((d) => apy(d, 'navApy', 'rolling30d')) },
        { label: 'compositionApy 7 d', values: days.map((d) => apy(d, 'apy', 'rolling7d')) },
        { label: 'compositionApy 30 d', values: days.map((d) => apy(d, 'apy', 'rolling30d')) },
      ],
      { fmt: pct, axis: (t) => `${num(t)} %`, emptyText: 'no settled day with 7 days of price history yet' },
    );
  }

  /**
   * Holders per chain at the end of each day (the last ended hour) and right now (`current`, the
   * last point): a chain whose holders all arrived within the hour has only that point.
   */
  function renderHolders(history, current) {
    const days = [...new Set(history.map((h) => h.day))].sort((a, b) => a - b);
    const xs = current.at > (days.at(-1) ?? 0) ? [...days, current.at] : days;
    const chains = [
      ...new Set([...history.map((h) => h.chainId), ...current.chains.map((c) => c.chainId)]),
    ].sort((a, b) => a - b);
    const at = new Map(history.map((h) => [`${h.day}|${h.chainId}`, h.end]));
    if (xs.at(-1) === current.at)
      for (const c of chains)
        at.set(`${current.at}|${c}`, current.chains.find((x) => x.chainId === c)?.holders ?? 0);
    const per = chains.map((c) => ({
      label: `${CHAIN_NAMES[c] ?? 'chain'} ${c}`,
      values: xs.map((d) => at.get(`${d}|${c}`) ?? null),
    }));
    const total = xs.map((d) => chains.reduce((n, c) => n + (at.get(`${d}|${c}`) ?? 0), 0));
    draw('holders', xs, [{ label: 'all chains', values: total, color: '#1d2430' }, ...per], {
      fmt: (v) => num(v, 0),
      axis: (t) => num(t, 0),
    });
  }

  const FEE_KINDS = [
    ['managementFee', 'management'],
    ['performanceFee', 'performance'],
    ['instantRedemptionFee', 'instant redemption'],
    ['depositFee', 'deposit'],
    ['redemptionFee', 'redemption'],
  ];

  function renderFees(entry, firstDay) {
    const byDate = new Map();
    for (const [key] of FEE_KINDS)
      for (const p of entry?.[key] ?? []) {
        const row = byDate.get(p.date) ?? {};
        row[key] = p.value;
        byDate.set(p.date, row);
      }
    const dates = [...byDate.keys()].sort();
    let xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    let rows = dates.map((d) => byDate.get(d));
    // The endpoint covers a year of days; the chart starts at the vault's first day.
    const from = Math.min(
      firstDay ?? Infinity,
      xs[rows.findIndex((r) => Object.values(r).some((v) => v))] ?? Infinity,
    );
    const keep = xs.map((x) => x >= from);
    xs = xs.filter((_, i) => keep[i]);
    rows = rows.filter((_, i) => keep[i]);
    // Stacked bars: each series is drawn as the running total up to its kind, largest first;
    // the legend shows each kind's own value.
    const series = [];
    for (let k = FEE_KINDS.length - 1; k >= 0; k--) {
      const [key, label] = FEE_KINDS[k];
      const own = rows.map((r) => r[key] ?? 0);
      const stacked = rows.map((r) => FEE_KINDS.slice(0, k + 1).reduce((s, [kk]) => s + (r[kk] ?? 0), 0));
      series.unshift({
        label,
        values: stacked.map((v) => (v > 0 ? v : null)),
        display: own,
        bars: true,
        fill: COLORS[k],
        color: COLORS[k],
      });
    }
    // Draw the tallest (all kinds) first so the smaller stacks stay visible on top of it.
    draw('fees', xs, series.reverse(), { fmt: usd, axis: (t) => usd(t) });
  }

  function renderFlows(rows) {
    const xs = rows.map((r) => r.day);
    draw(
      'flows',
      xs,
      [
        {
          label: 'deposits',
          values: rows.map((r) => r.depositsUsd),
          display: rows.map((r) => r.depositsUsd),
          bars: true,
          fill: '#1e8e3e',
          color: '#1e8e3e',
        },
        {
          label: 'withdrawals',
          values: rows.map((r) => -r.withdrawalsUsd),
          display: rows.map((r) => r.withdrawalsUsd),
          bars: true,
          fill: '#c0392b',
          color: '#c0392b',
        },
      ],
      { fmt: usd, axis: (t) => usd(t) },
    );
  }

  // The rows shown, newest first: as GET /vaults/recent-transactions answered, and the activity
  // events of the vault since (the same fields).
  let shownTransactions = [];
  const txKey = (t) => `${t.chainId}:${t.transactionHash}:${t.logIndex}`;

  function renderTransactions(entry) {
    shownTransactions = (entry?.recentTransactions ?? []).slice(0, 10);
    drawTransactions();
  }

  function drawTransactions() {
    const txs = shownTransactions;
    $('#transactions tbody').innerHTML = txs.length
      ? txs
          .map(
            (
              t,
            ) => `<tr data-tx="${escapeHtml(txKey(t))}"><td>${escapeHtml(new Date(t.createdAt * 1000).toISOString().replace('T', ' ').slice(0, 19))}</td>
<td>${escapeHtml(t.transactionType)}</td><td>${escapeHtml(CHAIN_NAMES[t.chainId] ?? t.chainId)}</td>
<td title="${escapeHtml(t.user)}">${escapeHtml(`${String(t.user).slice(0, 10)}…`)}</td>
<td>${escapeHtml(num(t.shares))}</td><td>${escapeHtml(num(t.assets))}</td>
<td title="${escapeHtml(t.transactionHash)}">${escapeHtml(`${String(t.transactionHash).slice(0, 12)}…`)}</td></tr>`,
          )
          .join('')
      : '<tr><td colspan="7" class="muted">no transactions</td></tr>';
  }

  /** A new row of the shown vault (an `activity` event): on top, newest first, ten at most. */
  function showActivity(t) {
    const vault = vaults.find((v) => v.slug === select.value);
    if (!vault || String(vault.vaultAddress).toLowerCase() !== String(t.vaultAddress).toLowerCase()) return;
    if (shownTransactions.some((x) => txKey(x) === txKey(t))) return;
    shownTransactions = [...shownTransactions, t]
      .sort((a, b) => b.createdAt - a.createdAt || b.logIndex - a.logIndex)
      .slice(0, 10);
    drawTransactions();
  }

  async function loadVault() {
    const slug = select.value;
    if (!slug) return;
    if (loadingVault) {
      loadAgain = true; // e.g. another vault chosen during a refresh: load it right after
      return;
    }
    loadingVault = true;
    try {
      const enc = encodeURIComponent(slug);
      const [perf, holders, holdersNow, fees, flows, recent] = await Promise.all([
        getJson(`/v1/vaults/${enc}/performance-history`),
        getJson(`/v1/vaults/${enc}/holders-history`),
        getJson(`/dashboard/api/holders/${enc}`),
        getJson('/v1/vaults/fees'),
        getJson(`/dashboard/api/flows/${enc}`),
        getJson('/v1/vaults/recent-transactions'),
      ]);
      if (select.value !== slug) return;
      const vault = vaults.find((v) => v.slug === slug);
      if (vault) renderKpis(vault);
      renderPerformance(perf.data.history);
      renderHolders(holders.data.history, holdersNow.data);
      const first = perf.data.history.reduce((m, d) => Math.min(m, d.day), Infinity);
      renderFees(
        fees.data.find((f) => f.slug === slug),
        Number.isFinite(first) ? first : undefined,
      );
      renderFlows(flows.data);
      const address = String(vault?.vaultAddress ?? '').toLowerCase();
      renderTransactions(recent.data.find((r) => String(r.vaultAddress).toLowerCase() === address));
      $('#updated').textContent = `updated ${new Date().toISOString().slice(11, 19)} UTC`;
      showError(null);
    } catch (err) {
      showError(err);
    } finally {
      loadingVault = false;
      if (loadAgain) {
        loadAgain = false;
        loadVault();
      }
    }
  }

  async function loadVaults() {
    const body = await getJson('/v1/vaults?status=all');
    vaults = body.data;
    const current = select.value || new URLSearchParams(location.search).get('vault');
    select.innerHTML = vaults
      .map(
        (v) => `<option value="${escapeHtml(v.slug)}">${escapeHtml(v.name)} (${escapeHtml(v.slug)})</option>`,
      )
      .join('');
    if (current && vaults.some((v) => v.slug === current)) select.value = current;
  }

  async function loadPipeline() {
    try {
      const html = await getJson('/status', 'text/html');
      const main = new DOMParser().parseFromString(html, 'text/html').querySelector('#pipeline');
      if (main) $('#pipeline-slot').replaceChildren(document.importNode(main, true));
      showError(null);
    } catch (err) {
      showError(err);
    }
  }

  select.addEventListener('change', () => {
    const url = new URL(location.href);
    url.searchParams.set('vault', select.value);
    history.replaceState(null, '', url);
    for (const fig of document.querySelectorAll('figure[data-chart]')) fig.removeAttribute('data-ready');
    loadVault();
  });

  // Reloads asked for by the events, each at most every RELOAD_GAP_MS.
  function throttled(run) {
    let last = 0;
    let timer;
    return () => {
      if (timer) return;
      timer = setTimeout(
        () => {
          timer = undefined;
          last = Date.now();
          run();
        },
        Math.max(0, last + RELOAD_GAP_MS - Date.now()),
      );
    };
  }
  const reloadVault = throttled(() => loadVaults().then(loadVault, showError));
  const reloadPipeline = throttled(loadPipeline);

  function showLive(state) {
    document.body.dataset.live = state;
    $('#live').textContent = state === 'open' ? '● live' : `○ ${state}`;
  }

  /** The event stream: the browser reconnects by itself, resuming after the last event it had. */
  function follow() {
    const es = new EventSource('/v1/events');
    es.addEventListener('open', () => showLive('open'));
    es.addEventListener('error', () =>
      showLive(es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'),
    );
    es.addEventListener('version', (e) => {
      const v = JSON.parse(e.data);
      document.body.dataset.version = v.version;
      reloadPipeline();
      if (v.changed === null || v.changed.vaults.includes(select.value)) reloadVault();
    });
    es.addEventListener('activity', (e) => showActivity(JSON.parse(e.data)));
    es.addEventListener('reset', () => {
      reloadVault();
      reloadPipeline();
    });
  }

  async function main() {
    try {
      await loadVaults();
    } catch (err) {
      showError(err);
      setTimeout(main, 3000);
      return;
    }
    follow();
    await Promise.all([loadVault(), loadPipeline()]);
    setInterval(() => {
      if (!document.hidden) reloadPipeline();
    }, PIPELINE_IDLE_MS);
  }
  main();
})();
