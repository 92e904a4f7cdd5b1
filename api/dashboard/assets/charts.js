/*
 * The dashboard's charts and number formats (plain browser JavaScript, no build step), for app.js:
 * one uPlot chart per figure. Each chart container gets data-ready="true" and data-points=N once
 * it is drawn with at least one point (data-empty="true" when the data has none), and data-series
 * (JSON: points per series label), which the browser test reads.
 */
window.vsCharts = (() => {
  const uPlot = window.uPlot;
  const COLORS = ['#2f6fdb', '#e67e22', '#1e8e3e', '#8e44ad', '#c0392b', '#16a085', '#7f8c8d'];
  const charts = new Map();

  const usd = (v) =>
    v == null
      ? '–'
      : `$${Number(v).toLocaleString('en-US', { maximumFractionDigits: Math.abs(v) >= 1000 ? 0 : 2 })}`;
  const num = (v, digits = 2) =>
    v == null ? '–' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits });
  const pct = (v) => (v == null ? '–' : `${Number(v).toFixed(2)} %`);
  const utcDay = (s) => new Date(s * 1000).toISOString().slice(0, 10);
  const escapeHtml = (s) =>
    String(s ?? '').replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
    );

  /**
   * The y axis's width in CSS pixels: its widest label as drawn in the axis font, plus the tick
   * and the gap. A fixed width cut the labels of large values at the canvas's left edge ("$12,000,000"
   * shown as "000,000"). uPlot calls this again after it has formatted the labels (cycleNum > 1
   * keeps the width found, so the layout converges).
   */
  function yAxisSize(u, values, axisIdx, cycleNum) {
    const axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    let width = 0;
    u.ctx.save();
    u.ctx.font = axis.font[0];
    for (const v of values ?? []) width = Math.max(width, u.ctx.measureText(v).width);
    u.ctx.restore();
    return Math.ceil(width / devicePixelRatio + axis.ticks.size + axis.gap + 8);
  }

  /** Draws (or updates) the chart of figure `name`: x = day (unix seconds), series = [{label, values, ...}]. */
  function draw(name, xs, series, opts = {}) {
    const fig = document.querySelector(`figure[data-chart="${name}"]`);
    const el = fig.querySelector('.plot');
    const points = series.reduce(
      (n, s) => n + s.values.filter((v) => v != null && Number.isFinite(v)).length,
      0,
    );
    const data = [xs, ...series.map((s) => s.values)];
    const shape = series.map((s) => s.label).join('|');
    let entry = charts.get(name);
    if (entry && entry.shape !== shape) {
      entry.plot.destroy();
      entry = undefined;
    }
    if (!entry) {
      el.textContent = '';
      const plot = new uPlot(
        {
          width: Math.max(300, el.clientWidth),
          height: 260,
          tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
          cursor: { drag: { x: true, y: false } },
          scales: { x: { time: true }, y: opts.yRange ? { range: opts.yRange } : {} },
          axes: [
            { stroke: '#6b7380', grid: { stroke: '#eef0f3' } },
            {
              stroke: '#6b7380',
              grid: { stroke: '#eef0f3' },
              size: yAxisSize,
              values: (_u, ticks) => ticks.map((t) => (opts.axis ? opts.axis(t) : num(t))),
            },
          ],
          series: [
            { label: 'day (UTC)', value: (_u, v) => (v == null ? '–' : utcDay(v)) },
            ...series.map((s, i) => ({
              label: s.label,
              stroke: s.color ?? COLORS[i % COLORS.length],
              fill: s.fill,
              width: s.bars ? 0 : 2,
              spanGaps: false,
              paths: s.bars ? uPlot.paths.bars({ size: [0.7, 48] }) : undefined,
              points: { show: s.bars ? false : xs.length < 60, size: 5 },
              value: s.display
                ? (_u, _v, _si, idx) => (idx == null ? '–' : opts.fmt(s.display[idx]))
                : (_u, v) => (v == null ? '–' : opts.fmt ? opts.fmt(v) : num(v)),
            })),
          ],
        },
        data,
        el,
      );
      entry = { plot, shape, el };
      charts.set(name, entry);
    } else {
      entry.plot.setData(data);
    }
    let empty = el.querySelector('.empty');
    if (points === 0) {
      if (!empty) {
        empty = document.createElement('div');
        empty.className = 'empty';
        el.appendChild(empty);
      }
      empty.textContent = opts.emptyText ?? 'no data yet';
      fig.removeAttribute('data-ready');
      fig.setAttribute('data-empty', 'true');
    } else {
      empty?.remove();
      fig.removeAttribute('data-empty');
      fig.setAttribute('data-ready', 'true');
    }
    fig.setAttribute('data-points', String(points));
    // Points per series, by label: what each line of the chart holds.
    fig.setAttribute(
      'data-series',
      JSON.stringify(
        Object.fromEntries(
          series.map((s) => [s.label, s.values.filter((v) => v != null && Number.isFinite(v)).length]),
        ),
      ),
    );
  }

  window.addEventListener('resize', () => {
    for (const { plot, el } of charts.values())
      plot.setSize({ width: Math.max(300, el.clientWidth), height: 260 });
  });

  return { COLORS, usd, num, pct, utcDay, escapeHtml, draw };
})();
