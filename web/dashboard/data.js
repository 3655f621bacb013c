/* The dashboard's script, 1 of 3 (one scope): the state, the API, the event stream. */
const API = '/api/v1/';
const WINDOW_MS = 3600 * 1000;
const DAY_MS = 24 * WINDOW_MS; /* the day view: one-minute aggregates (the history's tier 1) */
const $ = (id) => document.getElementById(id);

/* Everything the page knows; rendering reads only this. */
const S = {
	board: null, agent: {}, metrics: {}, seq: 0, ts: '', timeMs: 0, offsetMs: 0, powerMode: '',
	throttle: null, alerts: new Map(), recent: [], series: new Map(), cpuGroups: null,
	started: false, es: null, down: false, retry: 0, retryAt: 0, timer: 0, lastMsgAt: 0,
	everLive: false, historyLoaded: false, snapAt: 0, hover: {}, raf: 0, intervalMs: 1000,
	range: 'hour', day: new Map(), dayLoaded: false, counters: new Map(),
	clockEpoch: 0, /* one more at each clock step or start-over */
};

/* ---- small helpers (no markup from data: text nodes only) ---- */
const { h, num, clamp, cssVar, lowerBound } = kit;
function setText(el, s) {
	s = String(s);
	if (el.textContent !== s) { el.textContent = s; }
}
function setAttr(el, k, v) {
	v = String(v);
	if (el.getAttribute(k) !== v) { el.setAttribute(k, v); }
}
const fmt = (v, d) => (num(v) ? v.toFixed(d) : '–');
const pct = (v, lo, hi) => (hi > lo ? clamp((v - lo) / (hi - lo) * 100, 0, 100) : 0);

/* Board time: `ts` is the board's wall clock, time_ms the epoch; their
 * difference lets the page show every time as the board shows it. */
function wall(s) {
	const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)/.exec(typeof s === 'string' ? s : '');
	return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}
function epochOf(s) {
	if (typeof s !== 'string' || !s) { return NaN; }
	if (/(Z|[+-]\d\d:?\d\d)$/.test(s)) { return Date.parse(s); }
	return wall(s) - S.offsetMs;
}
const clock = (ms, withSec) => kit.hhmm(ms, S.offsetMs, withSec !== false);
function dur(ms) {
	const s = Math.max(0, Math.round(ms / 1000));
	if (s < 60) { return s + ' s'; }
	const m = Math.floor(s / 60);
	if (m < 60) { return m + ' min' + (m < 10 && s % 60 ? ' ' + (s % 60) + ' s' : ''); }
	const hr = Math.floor(m / 60);
	return hr < 48 ? hr + ' h ' + (m % 60) + ' min' : Math.floor(hr / 24) + ' d ' + (hr % 24) + ' h';
}
function parse(text) {
	try {
		const d = JSON.parse(text);
		return d && typeof d === 'object' ? d : null;
	} catch (e) {
		return null;
	}
}
async function getJSON(path) {
	const r = await fetch(API + path, { cache: 'no-store', headers: { Accept: 'application/json' } });
	if (!r.ok) { throw new Error(path + ': HTTP ' + r.status); }
	return r.json();
}

/* ---- metric names (docs/metrics.md) ---- */
const TEMP_RE = /^temp\.(.+)_c$/;
const RAIL_RE = /^power\.([^.]+)\.mw$/;
const GPU_KEYS = ['gpu.freq_mhz', 'gpu.max_freq_mhz', 'gpu.load_pct'];
const charted = (k) => TEMP_RE.test(k) || RAIL_RE.test(k) || GPU_KEYS.includes(k) || k === 'throttle.active';
const SENSOR_NAMES = {
	tj: 'Junction (tj)', cpu: 'CPU', gpu: 'GPU', soc: 'SoC', soc0: 'SoC 0', soc1: 'SoC 1', soc2: 'SoC 2',
	cv0: 'CV 0', cv1: 'CV 1', cv2: 'CV 2', tboard: 'Board', tdiode: 'Diode', ao: 'Always-on', pll: 'PLL',
	pmic: 'PMIC', aux: 'AUX', thermal: 'Thermal (avg)', bcpu: 'BCPU', mcpu: 'MCPU',
};
const sensorName = (s) => SENSOR_NAMES[s] || s;
function sensors() {
	const out = [];
	for (const k in S.metrics) {
		const r = TEMP_RE.exec(k);
		if (r && num(S.metrics[k])) { out.push(r[1]); }
	}
	/* the junction temperature first: it is what the governors act on */
	return out.sort((a, b) => (a === 'tj' ? -1 : b === 'tj' ? 1 : a < b ? -1 : a > b ? 1 : 0));
}
function rails() {
	const out = [];
	for (const k in S.metrics) {
		const r = RAIL_RE.exec(k);
		if (r && num(S.metrics[k])) { out.push(r[1]); }
	}
	const rank = (n) => (/(^|_)in($|_)|^vin/.test(n) ? 0 : 1);
	return out.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
const trip = (s) => S.metrics['trip.' + s + '.passive_c'];

/* ---- series: time-ordered points per charted metric ---- */
function push(k, t, v) {
	if (!num(v)) { return; }
	const d = S.day.get(k);
	if (d && (!d.t.length || t - d.t[d.t.length - 1] >= 60000)) { /* a live point a minute, as the day's */
		d.t.push(t);
		d.v.push(v);
		while (d.t.length && d.t[0] < t - DAY_MS) { d.t.shift(); d.v.shift(); }
	}
	let s = S.series.get(k);
	if (!s) {
		s = { t: [], v: [] };
		S.series.set(k, s);
	}
	const n = s.t.length;
	if (n && t <= s.t[n - 1]) { return; }
	s.t.push(t);
	s.v.push(v);
	/* trim in batches so the shift is rare */
	if (s.t[0] < t - WINDOW_MS - 60000) {
		let i = 0;
		while (i < s.t.length && s.t[i] < t - WINDOW_MS) { i++; }
		s.t.splice(0, i);
		s.v.splice(0, i);
	}
}
function shiftSeries(ms) {
	for (const m of [S.series, S.day]) {
		for (const s of m.values()) { s.t = s.t.map((x) => x + ms); }
	}
	S.timeMs += ms;
	S.clockEpoch++;
}

/* ---- counters turned into rates: each one's last ~10 s of samples ---- */
const COUNTER_RE = /^network\.[^.]+\.(receive|transmit)_bytes_total$/;
function keepCounter(k, t, v) {
	let c = S.counters.get(k);
	if (!c) {
		c = [];
		S.counters.set(k, c);
	}
	/* a counter that went back (the interface came back) or a clock that did: start again */
	if (c.length && (v < c[c.length - 1][1] || t <= c[c.length - 1][0])) { c.length = 0; }
	c.push([t, v]);
	while (c.length > 2 && t - c[1][0] >= 10000) { c.shift(); }
}
function rate(k) {
	const c = S.counters.get(k);
	return c && c.length > 1 ? (c[c.length - 1][1] - c[0][1]) * 1000 / (c[c.length - 1][0] - c[0][0]) : NaN;
}

/* ---- applying data ---- */
function ingest(d) {
	if (!d || typeof d.metrics !== 'object' || d.metrics === null) { return; }
	const t = num(d.time_ms) ? d.time_ms : Date.now();
	if (S.timeMs && num(d.clock_step_ms) && d.clock_step_ms) {
		/* the board's wall clock stepped: the charted points move with it, as the agent's history does,
		 * so the charts neither fold back nor show the step as an hour of silence */
		shiftSeries(d.clock_step_ms);
	}
	if (S.timeMs && t < S.timeMs) {
		/* the clock went back (agent restarted on a replay): start over */
		S.clockEpoch++;
		S.series.clear();
		S.historyLoaded = false;
		loadHistory();
		if (S.range === 'day') { setRange('day'); }
	}
	S.seq = num(d.seq) ? d.seq : S.seq;
	S.ts = typeof d.ts === 'string' ? d.ts : '';
	S.timeMs = t;
	const w = wall(S.ts);
	S.offsetMs = isNaN(w) ? 0 : w - t;
	S.metrics = d.metrics;
	S.powerMode = typeof d.power_mode === 'string' ? d.power_mode : '';
	S.throttle = d.throttle && typeof d.throttle === 'object' ? d.throttle : null;
	for (const k in d.metrics) {
		if (charted(k)) { push(k, t, d.metrics[k]); }
		if (COUNTER_RE.test(k) && num(d.metrics[k])) { keepCounter(k, t, d.metrics[k]); }
	}
	splitCpuGroups();
	schedule();
}
function applySnapshot(d) {
	S.board = d.board && typeof d.board === 'object' ? d.board : {};
	S.agent = d.agent && typeof d.agent === 'object' ? d.agent : {};
	S.snapAt = Date.now();
	if (num(S.agent.interval_ms) && S.agent.interval_ms > 0) { S.intervalMs = S.agent.interval_ms; }
	ingest(d);
	if (Array.isArray(d.alerts)) {
		applyAlerts({ active: d.alerts });
	}
}
const alertId = (a) => (typeof a.fingerprint === 'string' && a.fingerprint ? a.fingerprint : a.rule + '|' + a.metric);
function upsert(a) {
	if (!a || typeof a !== 'object') { return; }
	if (a.status === 'resolved' || a.transition === 'resolved' || a.transition === 'cancelled') {
		S.alerts.delete(alertId(a));
	} else {
		S.alerts.set(alertId(a), a);
	}
}
function applyAlerts(d) {
	if (Array.isArray(d.active)) {
		S.alerts.clear();
		d.active.forEach(upsert);
	}
	if (Array.isArray(d.recent)) { S.recent = d.recent.filter((a) => a && typeof a === 'object').slice(-30); }
	schedule();
}
function applyAlert(a) {
	if (!a) { return; }
	upsert(a);
	S.recent.push(a);
	if (S.recent.length > 30) { S.recent.shift(); }
	schedule();
}
function chartKeys() {
	return Object.keys(S.metrics).filter(charted);
}
/* A few requests at a time (the agent limits connections per client);
 * a metric whose request failed is asked once more a little later.
 * A later load of the same view supersedes this one. */
const loads = [0, 0];
async function loadHistory(day) {
	const v = day ? 1 : 0, run = ++loads[v], gone = () => loads[v] !== run;
	const queue = chartKeys().map((k) => [k, 0]);
	const span = day ? '&seconds=' + DAY_MS / 1000 + '&tier=1' : '&seconds=' + WINDOW_MS / 1000;
	const worker = async () => {
		for (let job; !gone() && (job = queue.shift());) {
			const [k, tries] = job, epoch = S.clockEpoch;
			let d;
			try {
				d = await getJSON('history?metric=' + encodeURIComponent(k) + span);
			} catch (e) {
				if (tries < 1) {
					await new Promise((r) => setTimeout(r, 2000));
					queue.push([k, tries + 1]);
				}
				continue; /* no history for it: the live points stay */
			}
			if (gone()) {
				return;
			}
			if (epoch !== S.clockEpoch) {
				/* the clock stepped while it came: its points are in the old times */
				queue.push([k, tries]);
				continue;
			}
			mergeHistory(k, d, day ? S.day : S.series);
		}
	};
	await Promise.all([worker(), worker(), worker()]);
	if (gone()) {
		return;
	}
	if (day) { S.dayLoaded = true; } else { S.historyLoaded = true; }
	schedule();
}
function setRange(range) {
	S.range = range;
	setAttr($('range-hour'), 'aria-pressed', String(range === 'hour'));
	setAttr($('range-day'), 'aria-pressed', String(range === 'day'));
	if (range === 'day') {
		S.day.clear();
		S.dayLoaded = false;
		loadHistory(true); /* the minutes, then a live point a minute */
	}
	schedule();
}
function mergeHistory(k, d, into) {
	const nt = [], nv = [];
	for (const p of Array.isArray(d.points) ? d.points : []) {
		if (Array.isArray(p) && num(p[0]) && num(p[1]) && (!nt.length || p[0] > nt[nt.length - 1])) {
			nt.push(p[0]);
			nv.push(p[1]);
		}
	}
	/* keep the live points that arrived after the history's end */
	const s = into.get(k) || { t: [], v: [] };
	const last = nt.length ? nt[nt.length - 1] : -Infinity;
	for (let i = 0; i < s.t.length; i++) {
		if (s.t[i] > last) {
			nt.push(s.t[i]);
			nv.push(s.v[i]);
		}
	}
	into.set(k, { t: nt, v: nv });
	schedule();
}

/* ---- the connection: snapshot, then the event stream; back-off on loss ---- */
function setConn(state, text, more) {
	const c = $('conn');
	setAttr(c, 'data-state', state);
	setText($('conn-text'), text);
	setText($('conn-more'), more || '');
}
async function start() {
	try {
		applySnapshot(await getJSON('snapshot'));
	} catch (e) {
		S.down = true;
		retryLater();
		return;
	}
	S.started = true;
	connect(); /* the history is asked for once the stream is open: no sample falls between */
	getJSON('alerts').then(applyAlerts, () => {});
}
async function resync() {
	try {
		applySnapshot(await getJSON('snapshot'));
		applyAlerts(await getJSON('alerts'));
	} catch (e) {
		return;
	}
	loadHistory();
}
function connect() {
	if (S.es) { S.es.close(); }
	setConn(S.everLive ? 'reconnecting' : 'connecting', S.everLive ? 'reconnecting…' : 'connecting…');
	const es = new EventSource(API + 'events');
	S.es = es;
	es.addEventListener('open', () => {
		if (S.down) {
			S.down = false;
			resync(); /* fill the gap the outage left */
		} else if (!S.historyLoaded) {
			loadHistory();
		}
	});
	es.addEventListener('sample', (e) => {
		S.retry = 0;
		S.lastMsgAt = Date.now();
		S.everLive = true;
		setConn('live', 'live');
		ingest(parse(e.data));
	});
	es.addEventListener('alert', (e) => applyAlert(parse(e.data)));
	es.addEventListener('error', () => {
		/* EventSource would retry at its own fixed pace: take over with a back-off */
		es.close();
		if (S.es !== es) { return; }
		S.es = null;
		S.down = true;
		retryLater();
	});
}
function retryLater() {
	const delay = Math.min(30000, 1000 * Math.pow(2, S.retry)) * (0.8 + Math.random() * 0.4);
	S.retry = Math.min(S.retry + 1, 6);
	S.retryAt = Date.now() + delay;
	clearTimeout(S.timer);
	S.timer = setTimeout(() => (S.started ? connect() : start()), delay);
	tick();
}
/* once a second: connection text, staleness */
function tick() {
	const now = Date.now();
	if (S.down && !S.es) {
		setConn(S.everLive || S.started ? 'reconnecting' : 'offline',
			S.started ? 'connection lost' : 'agent unreachable',
			', retry in ' + Math.max(1, Math.round((S.retryAt - now) / 1000)) + ' s');
	} else if (S.everLive && S.es) {
		const quiet = now - S.lastMsgAt;
		if (quiet > Math.max(5000, 3 * S.intervalMs)) {
			setConn('stale', 'no new sample', ' for ' + dur(quiet));
		}
	}
	const b = $('throttle-banner');
	b.classList.toggle('stale', S.down || $('conn').dataset.state === 'stale');
}

