/* The dashboard's script, 3 of 3: the history charts, drawn by the kit (core/page/chart.js). */
const color = kit.color;
function chartConfigs() {
	const m = S.metrics;
	const temps = sensors();
	const trips = [...new Set(temps.map(trip).filter(num))].sort((a, b) => a - b);
	const tempSeries = temps.slice(0, 10).map((s, i) => ({
		key: 'temp.' + s + '_c', label: sensorName(s), color: color(i), width: s === 'tj' ? 2.2 : 1.4,
		fmt: (v) => fmt(v, 1) + ' °C',
	}));
	const gpuSeries = [];
	if (S.series.has('gpu.load_pct') || num(m['gpu.load_pct'])) {
		gpuSeries.push({ key: 'gpu.load_pct', label: 'load', color: color(2), area: true, right: true, fmt: (v) => Math.round(v) + ' %' });
	}
	if (S.series.has('gpu.max_freq_mhz') || num(m['gpu.max_freq_mhz'])) {
		gpuSeries.push({ key: 'gpu.max_freq_mhz', label: 'ceiling', color: cssVar('--muted'), dash: true, step: true, fmt: (v) => Math.round(v) + ' MHz' });
	}
	if (S.series.has('gpu.freq_mhz') || num(m['gpu.freq_mhz'])) {
		gpuSeries.push({ key: 'gpu.freq_mhz', label: 'clock', color: color(0), width: 2, step: true, fmt: (v) => Math.round(v) + ' MHz' });
	}
	const hasGpuClock = gpuSeries.some((s) => s.key === 'gpu.freq_mhz');
	/* a throttle predicted within 10 min: a dashed line from now to the trip */
	for (const s of S.range === 'day' ? [] : tempSeries.slice()) {
		const z = s.key.slice(5, -2), e = m['throttle_eta.' + z + '_s'] * 1000;
		if (e > 0 && e <= 600000 && num(trip(z))) {
			const fc = { t: [], v: [] }, n = Math.ceil(e / 1000); /* a point a second: no gap breaks the line */
			for (let i = 0; i <= n; i++) {
				fc.t.push(S.timeMs + e * i / n);
				fc.v.push(m[s.key] + (trip(z) - m[s.key]) * i / n);
			}
			tempSeries.push({ label: s.label + ' → trip', color: s.color, dash: true, projected: true, fmt: s.fmt, fc });
		}
	}
	return [
		{ id: 'temp', series: tempSeries, unit: '°C', lines: trips.map((t) => ({ v: t, label: 'passive trip ' + fmt(t, 1) + ' °C' })),
			range: (lo, hi) => [Math.max(0, Math.floor((lo - 3) / 10) * 10), Math.ceil(Math.max(hi, trips.length ? trips[0] + 3 : hi) / 10) * 10] },
		{ id: 'gpu', series: hasGpuClock ? gpuSeries : [], unit: 'MHz',
			range: (lo, hi) => [0, kit.niceCeil(Math.max(hi, m['gpu.hw_max_freq_mhz'] || 0))], right: [0, 100, '%'] },
		{ id: 'power', series: rails().slice(0, 10).map((rl, i) => ({
			key: 'power.' + rl + '.mw', label: rl.toUpperCase(), color: color(i), width: i === 0 ? 2 : 1.4,
			scale: 0.001, fmt: (v) => fmt(v / 1000, 2) + ' W' })),
			unit: 'W', range: (lo, hi) => [0, kit.niceCeil(hi)] },
	];
}
function drawCharts() {
	const cfgs = chartConfigs();
	let span = 0;
	for (const c of cfgs) { span = Math.max(span, drawChart(c)); }
	const win = S.range === 'day' ? DAY_MS : WINDOW_MS;
	setText($('hist-span'), !S.timeMs || (S.range === 'day' && !S.dayLoaded) ? 'loading…' : span >= win - 60000
		? (S.range === 'day' ? 'last day, per minute' : 'last hour, live')
		: 'last ' + dur(span) + ' (all the agent has)' + (S.range === 'day' ? ', per minute' : ', live'));
}
/* the spans where throttle.active was 1, each sample lasting until the next (or one interval) */
function throttleBands(t0, t1) {
	const th = S.series.get('throttle.active'), out = [];
	if (!th) { return out; }
	const gap = 3 * S.intervalMs;
	for (let i = lowerBound(th.t, t0); i < th.t.length; i++) {
		if (!(th.v[i] >= 1)) { continue; }
		const a = th.t[i], b = Math.min(t1, i + 1 < th.t.length && th.t[i + 1] - a <= gap ? th.t[i + 1] : a + S.intervalMs);
		const last = out[out.length - 1];
		if (last && last[1] >= a) {
			last[1] = Math.max(last[1], b);
		} else {
			out.push([a, b]);
		}
	}
	return out;
}
function drawChart(cfg) {
	const cv = $('chart-' + cfg.id), empty = $('empty-' + cfg.id);
	const src = S.range === 'day' ? S.day : S.series;
	const series = cfg.series.map((s) => Object.assign({}, s, s.fc || src.get(s.key) || { t: [], v: [] }));
	const t1 = Math.max(S.timeMs, ...series.map((s) => (s.fc ? s.fc.t[s.fc.t.length - 1] : 0)));
	let first = t1;
	for (const s of series) {
		if (s.t.length) { first = Math.min(first, s.t[0]); }
	}
	const t0 = Math.max(t1 - (S.range === 'day' ? DAY_MS : WINDOW_MS), Math.min(first, t1 - 120000));
	const geo = t1 > 0 ? kit.drawChart(cv, { t0, t1, series, bands: throttleBands(t0, t1), unit: cfg.unit,
		range: cfg.range, right: cfg.right, lines: cfg.lines, gapMs: Math.max(3 * S.intervalMs, 3000),
		offsetMs: S.offsetMs, hover: S.hover[cfg.id] }) : null;
	empty.hidden = Number(cv.dataset.points) > 0 || !S.board;
	cv.parentNode.classList.toggle('is-empty', !empty.hidden);
	kit.legend($('lg-' + cfg.id), series).forEach((b, i) => {
		const v = valueAt(series[i], S.hover[cfg.id]);
		setText(b, num(v) ? series[i].fmt(v) : '–');
	});
	cv._geo = geo;
	if (!geo) {
		setAttr(cv, 'aria-label', empty.textContent);
		return 0;
	}
	const last = series.filter((s) => s.v.length).map((s) => s.label + ' ' + s.fmt(s.v[s.v.length - 1]));
	setAttr(cv, 'aria-label', cfg.id + ' chart, last ' + dur(t1 - t0) + ': ' + last.join(', '));
	return t1 - first;
}
/* the value of S at time T (the nearest point within three intervals), or its latest */
function valueAt(s, t) {
	if (t === undefined) { return s.v.length ? s.v[s.v.length - 1] : NaN; }
	const i = lowerBound(s.t, t);
	let best = -1;
	for (const j of [i - 1, i]) {
		if (j >= 0 && j < s.t.length && (best < 0 || Math.abs(s.t[j] - t) < Math.abs(s.t[best] - t))) { best = j; }
	}
	return best >= 0 && Math.abs(s.t[best] - t) <= 3 * S.intervalMs ? s.v[best] : NaN;
}
function hookHover(id) {
	const cv = $('chart-' + id);
	const at = (e) => {
		const geo = cv._geo;
		if (!geo) { return; }
		const x = e.clientX - cv.getBoundingClientRect().left;
		S.hover[id] = geo.t0 + clamp((x - geo.padL) / geo.pw, 0, 1) * (geo.t1 - geo.t0);
		schedule();
	};
	cv.addEventListener('pointermove', at);
	cv.addEventListener('pointerdown', at);
	cv.addEventListener('pointerleave', () => {
		delete S.hover[id];
		schedule();
	});
}

