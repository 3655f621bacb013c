/* The dashboard's script, 2 of 3: header, banner, alerts, meters and footer, updated in place. */
/* ---- CPU clusters: cores that always share a clock are one cluster. Groups
 * only ever split, so a row never jumps between layouts. ---- */
function splitCpuGroups() {
	const m = S.metrics, cores = [];
	for (const k in m) {
		const r = /^cpu\.(\d+)\.(freq_mhz|online)$/.exec(k);
		if (r && !cores.includes(+r[1])) { cores.push(+r[1]); }
	}
	cores.sort((a, b) => a - b);
	const known = S.cpuGroups ? [].concat(...S.cpuGroups).sort((a, b) => a - b) : [];
	if (!S.cpuGroups || known.join() !== cores.join()) {
		const by = new Map();
		for (const c of cores) {
			const key = String(m['cpu.' + c + '.hw_max_freq_mhz']);
			if (!by.has(key)) { by.set(key, []); }
			by.get(key).push(c);
		}
		S.cpuGroups = [...by.values()];
	}
	const out = [];
	for (const g of S.cpuGroups) {
		const by = new Map(), off = [];
		for (const c of g) {
			const f = m['cpu.' + c + '.freq_mhz'];
			if (!num(f) || m['cpu.' + c + '.online'] === 0) {
				off.push(c);
				continue;
			}
			if (!by.has(f)) { by.set(f, []); }
			by.get(f).push(c);
		}
		const parts = [...by.values()];
		if (!parts.length) { parts.push([]); }
		parts[0].push(...off);
		parts.forEach((p) => out.push(p.sort((a, b) => a - b)));
	}
	S.cpuGroups = out.sort((a, b) => a[0] - b[0]);
}
function coreLabel(g) {
	if (g.length === 1) { return 'CPU ' + g[0]; }
	const consecutive = g.every((c, i) => i === 0 || c === g[i - 1] + 1);
	return 'CPU ' + (consecutive ? g[0] + '–' + g[g.length - 1] : g.join(', '));
}

/* ---- keyed rows: a meter row per key, created once, updated in place ---- */
function rowsIn(box) {
	if (!box._rows) { box._rows = new Map(); }
	return box._rows;
}
function meterRow(box, key) {
	const rows = rowsIn(box);
	let r = rows.get(key);
	if (!r) {
		r = { el: h('div', 'm'), label: h('span', 'ml'), value: h('span', 'mv'), bar: h('div', 'bar'),
			fill: h('div', 'fill'), cap: h('div', 'cap'), mark: h('div', 'mark'), sub: h('div', 'ms') };
		const head = h('div', 'mh');
		head.append(r.label, r.value);
		r.bar.append(r.fill, r.cap, r.mark);
		r.bar.setAttribute('aria-hidden', 'true');
		r.el.append(head, r.bar, r.sub);
		r.el.dataset.key = key;
		rows.set(key, r);
	}
	if (!r.seen) {
		r.seen = true;
		box._order.push(r.el);
	}
	return r;
}
function beginRows(box) {
	rowsIn(box).forEach((r) => { r.seen = false; });
	box._order = [];
}
function endRows(box) {
	/* drop rows whose metric vanished, then put the rest in render order */
	const rows = rowsIn(box), order = box._order;
	rows.forEach((r, k) => {
		if (!r.seen) {
			r.el.remove();
			rows.delete(k);
		}
	});
	order.forEach((el, i) => {
		if (box.children[i] !== el) { box.insertBefore(el, box.children[i] || null); }
	});
	return order.length;
}
function setBar(r, valuePct, cls, capFromPct, markPct, markCls) {
	r.fill.style.width = valuePct.toFixed(1) + '%';
	r.fill.className = 'fill' + (cls ? ' ' + cls : '');
	r.cap.style.display = capFromPct < 99.5 ? '' : 'none';
	r.cap.style.left = capFromPct.toFixed(1) + '%';
	r.mark.style.display = markPct === null ? 'none' : '';
	if (markPct !== null) { r.mark.style.left = markPct.toFixed(1) + '%'; }
	r.mark.className = 'mark' + (markCls ? ' ' + markCls : '');
}

/* ---- renderers ---- */
function renderHeader() {
	const b = S.board || {};
	const model = typeof b.model === 'string' && b.model ? b.model : 'Unknown board';
	setText($('board-model'), S.board ? model : 'Connecting to the agent…');
	const parts = [];
	if (b.soc) { parts.push(String(b.soc)); }
	if (b.module) { parts.push('module ' + b.module); }
	parts.push(b.l4t ? 'L4T ' + b.l4t : 'L4T unknown');
	parts.push(b.jetpack ? 'JetPack ' + b.jetpack : 'JetPack unknown');
	setText($('board-meta'), S.board ? parts.join(' · ') : '');
	setText($('power-mode'), S.powerMode || 'unknown');
	const id = S.metrics['nvpmodel.id'];
	setAttr($('power-mode').parentNode, 'title', 'nvpmodel power mode' + (num(id) ? ' (id ' + id + ')' : ''));
	const th = S.throttle;
	const state = th ? (th.active ? 'THROTTLING · ' : '') : '';
	document.title = state + (S.board ? model.replace(/^NVIDIA /, '') + ' · ' : '') + 'tegrawatch';
}
const REASONS = {
	thermal: ['Thermal', 'A zone passed its passive trip point; the kernel lowers clocks to cool down.'],
	overcurrent: ['Over-current', 'The supply monitor saw over-current or under-voltage; clocks are cut briefly.'],
	rail_alarm: ['Rail current alarm', 'A power rail is above its current limit.'],
	freq_cap: ['Clock capped', 'A clock is held well below its ceiling while busy.'],
};
/* start of the current run of throttle.active = 1, and end of the last one */
function throttleRuns() {
	const s = S.series.get('throttle.active');
	if (!s || !s.t.length) {
		return { since: null, lastEnd: null };
	}
	let i = s.t.length - 1;
	if (s.v[i] >= 1) {
		while (i > 0 && s.v[i - 1] >= 1) { i--; }
		return { since: s.t[i], atLeast: i === 0, lastEnd: null };
	}
	while (i >= 0 && !(s.v[i] >= 1)) { i--; }
	return { since: null, lastEnd: i >= 0 ? s.t[i] : null };
}
let favState = '';
function renderBanner() {
	const b = $('throttle-banner'), th = S.throttle;
	const state = th ? (th.active ? 'throttled' : 'ok') : 'unknown';
	setAttr(b, 'data-state', state);
	setAttr(b, 'data-seq', S.seq);
	const runs = throttleRuns();
	const icon = b.querySelector('.icon');
	let title = 'Waiting for the first sample', since = '', forT = '', note = '', ago = '';
	if (state === 'throttled') {
		title = 'Throttling';
		if (runs.since !== null) {
			since = runs.atLeast ? 'since before ' + clock(runs.since) : 'since ' + clock(runs.since);
			forT = '(' + (runs.atLeast ? 'over ' : '') + dur(S.timeMs - runs.since) + ')';
		}
	} else if (state === 'ok') {
		title = 'Not throttling';
		if (runs.lastEnd !== null) {
			note = 'Last throttled until ' + clock(runs.lastEnd) + '.';
			ago = '(' + dur(S.timeMs - runs.lastEnd) + ' ago)';
		} else if (S.historyLoaded) {
			note = 'No throttling in the recorded history.';
		}
	}
	setText(icon, state === 'throttled' ? '▼' : state === 'ok' ? '✓' : '…');
	setText($('throttle-title'), title);
	setText($('throttle-since'), since);
	setText($('throttle-for'), forT);
	setText($('throttle-note'), note);
	setText($('throttle-ago'), ago);
	const ctx = th && typeof th.context === 'string' ? th.context : '';
	setText($('throttle-context'), ctx ? 'Context: ' + ctx : '');
	/* The explanations carry live numbers, and the banner is a live region:
	 * rebuilt when the set of reasons changes, otherwise every 15 s at most. */
	const reasons = th && th.active && th.reasons && typeof th.reasons === 'object' ? Object.keys(th.reasons) : [];
	const sig = reasons.join();
	const ul = $('throttle-reasons'), now = Date.now();
	if (ul._sig !== sig || (reasons.length && now - ul._at > 15000)) {
		ul._sig = sig;
		ul._at = now;
		ul.replaceChildren();
		for (const k of reasons) {
			const li = h('li');
			li.dataset.reason = k;
			const info = REASONS[k] || [k, ''];
			li.append(h('span', 'rk', info[0]), h('span', 'rx', String(th.reasons[k])));
			if (info[1]) { li.append(h('span', 'rh', info[1])); }
			ul.append(li);
		}
	}
	if (favState !== state) {
		favState = state;
		const col = cssVar(state === 'throttled' ? '--bad' : state === 'ok' ? '--ok' : '--unk');
		$('favicon').href = 'data:image/svg+xml,' + encodeURIComponent(
			"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='7' fill='" + col + "'/></svg>");
	}
}
const SEV_RANK = { critical: 0, warning: 1 };
function sinceText(a) {
	const st = epochOf(a.starts_at || a.at);
	if (isNaN(st)) { return ''; }
	return 'since ' + clock(st) + ' (' + dur(S.timeMs - st) + ')';
}
function renderAlerts() {
	const list = [...S.alerts.values()].sort((a, b) =>
		(a.status === 'pending') - (b.status === 'pending') ||
		(SEV_RANK[a.severity] ?? 2) - (SEV_RANK[b.severity] ?? 2) ||
		String(b.starts_at || '').localeCompare(String(a.starts_at || '')));
	const ul = $('alerts');
	const sig = list.map((a) => [alertId(a), a.status, a.severity, a.summary, a.value, sinceText(a)].join('\u0001')).join('\n');
	if (ul._sig === sig) { return; }
	ul._sig = sig;
	ul.replaceChildren();
	let firing = 0, crit = 0;
	for (const a of list) {
		const li = h('li', 'alert');
		li.dataset.rule = String(a.rule || '');
		li.dataset.severity = String(a.severity || '');
		li.dataset.status = String(a.status || '');
		if (a.status !== 'pending') {
			firing++;
			crit += a.severity === 'critical' ? 1 : 0;
		}
		const sev = h('span', 'sev', a.status === 'pending' ? 'pending' : String(a.severity || 'alert'));
		const body = h('div');
		body.append(h('p', 'as', String(a.summary || a.rule || 'alert')));
		const meta = [String(a.rule || '')];
		if (a.metric) { meta.push(a.metric + (num(a.value) ? ' = ' + +a.value.toFixed(3) : '')); }
		if (num(a.threshold)) { meta.push('threshold ' + +a.threshold.toFixed(3)); }
		const since = sinceText(a);
		if (since) { meta.push(since); }
		body.append(h('p', 'am', meta.join(' · ')));
		li.append(sev, body);
		ul.append(li);
	}
	$('alerts-empty').hidden = list.length > 0;
	const cnt = $('alert-count');
	setText(cnt, firing);
	cnt.className = 'badge num ' + (crit ? 'bad' : firing ? 'warn' : 'unk');
}
/* recent transitions, newest first */
function renderRecent() {
	const rec = $('recent');
	const items = S.recent.slice(-10).reverse();
	const rsig = items.map((a) => [alertId(a), a.transition, a.at]).join('\n');
	if (rec._sig === rsig) { return; }
	rec._sig = rsig;
	$('recent-box').hidden = items.length === 0;
	setText($('recent-sum'), 'Recent transitions (' + items.length + ')');
	rec.replaceChildren();
	for (const a of items) {
		const li = h('li');
		const at = epochOf(a.at || a.starts_at);
		li.append(h('span', 'muted', isNaN(at) ? '' : clock(at) + ' '),
			h('span', 'tr', String(a.rule || '') + ' ' + String(a.transition || a.status || '')),
			document.createTextNode(' ' + (a.severity && a.severity !== 'none' ? '[' + a.severity + '] ' : '') +
				String(a.summary || '')));
		rec.append(li);
	}
}
function tempClass(v, tp) {
	if (num(tp)) { return v >= tp ? 'bad' : v >= tp - 10 ? 'warn' : 'ok'; }
	/* no trip point: the shipped rule's fallbacks, 85 and 95 C */
	return v >= 95 ? 'bad' : v >= 85 ? 'warn' : 'ok';
}
function renderTemps() {
	const box = $('temps'), list = sensors(), m = S.metrics;
	let lo = 20, hi = 100;
	for (const s of list) {
		const v = m['temp.' + s + '_c'], tp = trip(s), crit = m['trip.' + s + '.critical_c'];
		lo = Math.min(lo, Math.floor((v - 5) / 10) * 10);
		hi = Math.max(hi, v + 5, num(tp) ? tp + 10 : 0, num(crit) ? crit : 0);
	}
	hi = Math.ceil(hi / 10) * 10;
	beginRows(box);
	for (const s of list) {
		const v = m['temp.' + s + '_c'], tp = trip(s), r = meterRow(box, s);
		setText(r.label, sensorName(s));
		setAttr(r.label, 'title', 'temp.' + s + '_c');
		setText(r.value, fmt(v, 1) + ' °C');
		const cls = tempClass(v, tp);
		setBar(r, pct(v, lo, hi), cls, 100, num(tp) ? pct(tp, lo, hi) : null, 'trip');
		let sub;
		if (num(tp)) {
			const head = tp - v;
			sub = head > 0 ? fmt(head, 1) + ' °C below passive trip ' + fmt(tp, 1) + ' °C'
				: 'at or above passive trip ' + fmt(tp, 1) + ' °C';
		} else {
			sub = 'no passive trip point';
		}
		const eta = m['throttle_eta.' + s + '_s'], ss = m['steady_temp.' + s + '_c'];
		if (eta > 0) {
			sub += ' · throttle in ' + dur(eta * 1000) + ' ± ' + dur(m['throttle_eta_error.' + s + '_s'] * 1000);
		} else if (!num(eta) && ss < tp) {
			sub += ' · will not throttle at this load (' + fmt(ss, 1) + ' °C)';
		}
		setText(r.sub, sub);
		r.el.dataset.state = cls;
	}
	/* rail-gated (Thor's GPU asleep) */
	for (const k of Object.keys(m).filter((x) => /^zone\..+\.gated$/.test(x) && m[x] === 1)) {
		const z = k.slice(5, -6), r = meterRow(box, z);
		setText(r.label, sensorName(z));
		setText(r.value, 'gated');
		setBar(r, 0, 'unk', 100, null);
		setText(r.sub, 'asleep, not an error');
		r.el.dataset.state = 'gated';
	}
	$('temps-empty').hidden = endRows(box) > 0;
}
function clockRow(box, key, label, f, ceil, hw, extra) {
	const r = meterRow(box, key);
	setText(r.label, label);
	const top = num(hw) ? hw : num(ceil) ? ceil : f;
	if (!num(f)) {
		setText(r.value, 'off');
		setBar(r, 0, 'unk', 100, null);
		setText(r.sub, extra || '');
		return false;
	}
	setText(r.value, Math.round(f) + ' MHz');
	const capped = num(ceil) && num(hw) && ceil < hw - 0.5;
	setBar(r, pct(f, 0, top), '', capped ? pct(ceil, 0, top) : 100, capped ? pct(ceil, 0, top) : null);
	const bits = [];
	if (num(ceil)) { bits.push('ceiling ' + Math.round(ceil)); }
	if (num(hw) && (!num(ceil) || capped)) { bits.push('hw max ' + Math.round(hw)); }
	if (!num(ceil) && !num(hw)) { bits.push('no ceiling known'); }
	if (extra) { bits.push(extra); }
	setText(r.sub, bits.join(' · '));
	return capped;
}
function renderClocks() {
	const box = $('clocks'), m = S.metrics;
	let capped = false;
	beginRows(box);
	if (num(m['gpu.freq_mhz'])) {
		const load = m['gpu.load_pct'];
		capped = clockRow(box, 'gpu', 'GPU', m['gpu.freq_mhz'], m['gpu.max_freq_mhz'], m['gpu.hw_max_freq_mhz'],
			num(load) ? 'load ' + Math.round(load) + ' %' : '') || capped;
	} else {
		const r = meterRow(box, 'gpu');
		setText(r.label, 'GPU');
		setText(r.value, '');
		setBar(r, 0, 'unk', 100, null);
		setText(r.sub, 'No GPU clock on this board.');
	}
	const groups = S.cpuGroups || [];
	for (const g of groups) {
		const on = g.filter((c) => num(m['cpu.' + c + '.freq_mhz']) && m['cpu.' + c + '.online'] !== 0);
		const first = on.length ? on[0] : g[0];
		const f = on.length ? Math.max(...on.map((c) => m['cpu.' + c + '.freq_mhz'])) : NaN;
		const loads = on.map((c) => m['cpu.' + c + '.load_pct']).filter(num);
		const extra = [];
		if (loads.length) {
			extra.push('load ' + Math.round(loads.reduce((a, b) => a + b, 0) / loads.length) + ' %');
		}
		if (on.length < g.length) {
			extra.push((g.length - on.length) + ' core' + (g.length - on.length > 1 ? 's' : '') + ' off');
		}
		capped = clockRow(box, 'cpu' + g.join('_'), coreLabel(g), f, m['cpu.' + first + '.max_freq_mhz'],
			m['cpu.' + first + '.hw_max_freq_mhz'], extra.join(' · ')) || capped;
	}
	if (!groups.length) {
		const r = meterRow(box, 'cpu');
		setText(r.label, 'CPU');
		setText(r.value, '');
		setBar(r, 0, 'unk', 100, null);
		setText(r.sub, 'No CPU clocks reported.');
	}
	if (num(m['emc.freq_mhz'])) {
		const r = meterRow(box, 'emc');
		setText(r.label, 'Memory (EMC)');
		setText(r.value, Math.round(m['emc.freq_mhz']) + ' MHz');
		const load = m['emc.load_pct'];
		setBar(r, num(load) ? load : 0, '', 100, null);
		setText(r.sub, num(load) ? 'bandwidth used ' + Math.round(load) + ' %' : '');
	}
	endRows(box);
	$('clk-note').hidden = !capped;
}
function renderPower() {
	const box = $('power'), m = S.metrics, list = rails();
	let top = 0;
	for (const rl of list) {
		const s = S.series.get('power.' + rl + '.mw');
		top = Math.max(top, m['power.' + rl + '.mw'], s && s.v.length ? Math.max(...s.v) : 0);
	}
	top = kit.niceCeil(top);
	beginRows(box);
	for (const rl of list) {
		const p = 'power.' + rl + '.', v = m[p + 'mw'], r = meterRow(box, rl);
		setText(r.label, rl.toUpperCase());
		setAttr(r.label, 'title', p + 'mw');
		setText(r.value, fmt(v / 1000, 2) + ' W');
		const crit = m[p + 'crit_alarm'] === 1, warn = m[p + 'max_alarm'] === 1;
		setBar(r, pct(v, 0, top), crit ? 'bad' : warn ? 'warn' : '', 100, null);
		const bits = [];
		if (num(m[p + 'avg_mw'])) { bits.push('avg ' + fmt(m[p + 'avg_mw'] / 1000, 2) + ' W'); }
		if (num(m[p + 'mv'])) { bits.push(fmt(m[p + 'mv'] / 1000, 2) + ' V'); }
		if (num(m[p + 'ma'])) {
			bits.push(fmt(m[p + 'ma'] / 1000, 2) + ' A' + (num(m[p + 'crit_ma']) ? ' of ' + fmt(m[p + 'crit_ma'] / 1000, 2) + ' A limit' : ''));
		}
		setText(r.sub, bits.join(' · '));
		if (crit || warn) {
			r.sub.append(h('span', 'badge ' + (crit ? 'bad' : 'warn'), crit ? 'over-current alarm' : 'current warning'));
		}
	}
	/* work (docs/work.md): the board's energy per unit */
	for (const k of Object.keys(m).filter((x) => /^work\.\w+\.joules_per_unit$/.test(x))) {
		const p = k.slice(0, -15), r = meterRow(box, p), a = m[p + 'above_idle_joules_per_unit'];
		setText(r.label, p.slice(5, -1));
		setText(r.value, fmt(m[k], 3) + ' J each');
		setBar(r, 0, '', 100, null);
		setText(r.sub, fmt(m[p + 'rate_per_s'], 1) + ' per s' + (num(a) ? ' · ' + fmt(a, 3) + ' J above idle' : ''));
	}
	const n = endRows(box);
	$('power-empty').hidden = n > 0;
	setText($('pow-total'), n ? 'scale 0–' + fmt(top / 1000, top < 10000 ? 1 : 0) + ' W' : '');
	/* soctherm over-current counters: what the "overcurrent" reason counts */
	const oc = Object.keys(m).filter((k) => /^oc\.\d+\.events$/.test(k)).sort();
	const note = $('oc-note');
	note.hidden = oc.length === 0;
	setText(note, 'Over-current events since boot: ' + oc.map((k) => 'oc' + k.split('.')[1] + ' ' + m[k]).join(', '));
}
function renderSystem() {
	const box = $('system'), m = S.metrics;
	beginRows(box);
	const loadRow = (key, label, v, sub) => {
		const r = meterRow(box, key);
		setText(r.label, label);
		setText(r.value, Math.round(v) + ' %');
		setBar(r, clamp(v, 0, 100), v >= 90 ? 'warn' : '', 100, null);
		setText(r.sub, sub || '');
	};
	if (num(m['cpu.load_pct'])) {
		const on = Object.keys(m).filter((k) => /^cpu\.\d+\.online$/.test(k));
		const up = on.filter((k) => m[k] === 1).length;
		loadRow('cpu', 'CPU load', m['cpu.load_pct'], on.length ? up + ' of ' + on.length + ' cores online' : '');
	}
	if (num(m['gpu.load_pct'])) { loadRow('gpu', 'GPU load', m['gpu.load_pct'], ''); }
	for (const k of Object.keys(m).filter((x) => /^gpu\.\d+\.lost$/.test(x))) {
		const p = k.slice(0, -4), v = m[p + 'load_pct'], r = meterRow(box, p), b = [];
		if (num(m[p + 'temp_c'])) { b.push(m[p + 'temp_c'] + ' °C'); }
		if (num(m[p + 'power_mw'])) { b.push(fmt(m[p + 'power_mw'] / 1000, 1) + ' W'); }
		setText(r.label, 'GPU ' + p.slice(4, -1) + ' (NVML)');
		setText(r.value, m[k] ? 'lost' : num(v) ? Math.round(v) + ' %' : '');
		setBar(r, num(v) ? v : 0, m[k] ? 'bad' : '', 100, null);
		setText(r.sub, b.join(' · '));
	}
	const memRow = (key, label, used, total, sub) => {
		const r = meterRow(box, key);
		setText(r.label, label);
		setText(r.value, (used / 1024).toFixed(2) + ' / ' + (total / 1024).toFixed(1) + ' GiB');
		const p = pct(used, 0, total);
		setBar(r, p, p >= 90 ? 'warn' : '', 100, null);
		setText(r.sub, Math.round(p) + ' % used' + (sub ? ' · ' + sub : ''));
	};
	if (num(m['ram.used_mb']) && m['ram.total_mb'] > 0) {
		memRow('ram', 'RAM', m['ram.used_mb'], m['ram.total_mb']);
	}
	/* the host (docs/metrics.md#the-host): what applications can still take, and who waits */
	if (num(m['ram.available_mb'])) {
		const r = meterRow(box, 'avail'), v = m['ram.available_mb'], t = m['ram.total_mb'];
		setText(r.label, 'Memory available');
		setText(r.value, (v / 1024).toFixed(2) + ' GiB');
		setBar(r, t > 0 ? pct(v, 0, t) : 0, t > 0 && v < t / 10 ? 'warn' : 'ok', 100, null);
		const ps = ['cpu', 'memory', 'io'].filter((x) => num(m['pressure.' + x + '.some_avg10_pct']))
			.map((x) => x + ' ' + fmt(m['pressure.' + x + '.some_avg10_pct'], 1) + ' %');
		setText(r.sub, ps.length ? 'stalled over 10 s: ' + ps.join(', ') : '');
	}
	if (num(m['swap.used_mb']) && m['swap.total_mb'] > 0) {
		memRow('swap', 'Swap', m['swap.used_mb'], m['swap.total_mb'],
			num(m['swap.cached_mb']) ? m['swap.cached_mb'] + ' MiB cached' : '');
	}
	for (const k of Object.keys(m).sort()) {
		const f = /^fan\.([^.]+)\.rpm$/.exec(k);
		if (!f) { continue; }
		const r = meterRow(box, 'fan' + f[1]);
		const pwm = m['fan.' + f[1] + '.pwm'];
		setText(r.label, 'Fan ' + f[1]);
		setText(r.value, Math.round(m[k]) + ' rpm');
		setBar(r, num(pwm) ? pct(pwm, 0, 255) : 0, '', 100, null);
		setText(r.sub, num(pwm) ? 'drive ' + Math.round(pwm / 2.55) + ' % (pwm ' + pwm + ')' : '');
	}
	const eng = Object.keys(m).filter((k) => /^engine\.[^.]+\.on$/.test(k) && m[k] === 1)
		.map((k) => k.split('.')[1].toUpperCase());
	const n = endRows(box);
	setText($('eng-note'), eng.length ? 'Engines on: ' + eng.join(', ') : '');
	const oom = m['oom.kills_total'];
	$('oom-note').hidden = !(oom > 0);
	setText($('oom-note'), 'OOM kills since boot: ' + oom);
	$('system-empty').hidden = n > 0 || !S.board;
}
/* a mount's segment as the page can tell it: "/" for root, else the segment (the real path is on /metrics) */
const mountName = (seg) => (seg === 'root' ? '/' : seg);
function gib(mb) {
	return mb >= 1024 ? fmt(mb / 1024, 1) + ' GiB' : fmt(mb, 0) + ' MiB';
}
function renderDisks() {
	const box = $('disks'), m = S.metrics;
	beginRows(box);
	const fs = Object.keys(m).filter((x) => /^filesystem\.[^.]+\.used_pct$/.test(x)).sort();
	for (const k of fs.filter((x) => x === 'filesystem.root.used_pct').concat(fs.filter((x) => x !== 'filesystem.root.used_pct'))) {
		const seg = k.slice(11, -9), p = 'filesystem.' + seg + '.', v = m[k], r = meterRow(box, seg);
		const ro = m[p + 'readonly'] === 1, eta = m[p + 'full_eta_s'];
		setText(r.label, mountName(seg));
		setAttr(r.label, 'title', k);
		setText(r.value, fmt(v, 1) + ' %');
		/* the shipped rule's thresholds: warning at 90 %, critical at 97 % */
		const cls = v >= 97 || ro ? 'bad' : v >= 90 || eta < 86400 ? 'warn' : 'ok';
		setBar(r, clamp(v, 0, 100), cls, 100, null);
		const bits = [gib(m[p + 'avail_mb']) + ' free of ' + gib(m[p + 'size_mb'])];
		if (num(eta)) { bits.push('full in ' + dur(eta * 1000)); }
		setText(r.sub, bits.join(' · '));
		if (ro) { r.sub.append(h('span', 'badge bad', 'read-only')); }
		r.el.dataset.state = cls;
	}
	$('disks-card').hidden = endRows(box) === 0;
	const emmc = Object.keys(m).filter((x) => /^emmc\.[^.]+\.pre_eol$/.test(x)).map((x) => {
		const d = x.split('.')[1], a = m['emmc.' + d + '.life_time_a_pct'];
		return d + ': ' + ['', 'normal', 'worn (80 % of spare blocks)', 'urgent'][m[x]] + (num(a) ? ', life used ' + a + ' %' : '');
	});
	$('emmc-note').hidden = emmc.length === 0;
	setText($('emmc-note'), 'eMMC ' + emmc.join('; '));
}
/* bits a second, as links are rated */
function bps(bytes) {
	const b = bytes * 8;
	return !num(b) ? '–' : b >= 1e6 ? fmt(b / 1e6, 1) + ' Mbit/s' : fmt(b / 1e3, b >= 1e4 ? 0 : 1) + ' kbit/s';
}
/* a card of rows without a bar, each up or down: one per NAME of the metrics PREFIX.NAME.KEY, named as text */
function upCard(id, prefix, key, downBadge, cls, bitsOf) {
	const box = $(id), m = S.metrics;
	beginRows(box);
	for (const k of Object.keys(m).filter((x) => x.startsWith(prefix) && x.endsWith('.' + key)).sort()) {
		const n = k.slice(prefix.length, -key.length - 1), p = prefix + n + '.', up = m[p + 'up'];
		if (n.includes('.')) { continue; }
		const r = meterRow(box, n);
		setText(r.label, n);
		setText(r.value, up === 1 ? 'up' : up === 0 ? 'down' : '');
		r.value.className = 'mv' + (up === 0 ? ' ' + cls : '');
		r.bar.style.display = 'none';
		setText(r.sub, bitsOf((x) => m[p + x], p).filter((b) => b).join(' · '));
		if (up === 0) { r.sub.append(h('span', 'badge ' + cls, downBadge)); }
		r.el.dataset.state = up === 0 ? 'down' : up === 1 ? 'up' : 'unknown';
	}
	$(id + '-card').hidden = endRows(box) === 0;
}
function renderNet() {
	upCard('net', 'network.', 'receive_bytes_total', 'link down', 'warn', (v, p) => {
		const errs = (v('receive_errors_total') || 0) + (v('transmit_errors_total') || 0);
		return ['↓ ' + bps(rate(p + 'receive_bytes_total')), '↑ ' + bps(rate(p + 'transmit_bytes_total')),
			errs && errs + ' errors', num(v('wifi_signal_dbm')) && v('wifi_signal_dbm') + ' dBm'];
	});
}
const nOf = (n, one, many) => n + ' ' + (n === 1 ? one : many);
/* the processes: section's (docs/metrics.md#processes); what is there only while one runs is left out when down */
function renderProcs() {
	upCard('procs', 'process.', 'up', 'not running', 'bad', (v) => (v('up') === 1 ? [nOf(v('count'), 'process', 'processes'),
		num(v('cpu_pct')) && 'CPU ' + fmt(v('cpu_pct'), 1) + ' %', fmt(v('resident_mb'), 1) + ' MiB resident',
		nOf(v('threads'), 'thread', 'threads'), num(v('gpu_memory_mb')) && 'GPU ' + fmt(v('gpu_memory_mb'), 0) + ' MiB',
		'up ' + dur(v('uptime_s') * 1000)] : []).concat(nOf(v('restarts_total'), 'restart', 'restarts')));
}
/* host.probes (docs/metrics.md#probes): absent until a probe's first attempt ends */
function renderProbes() {
	upCard('probes', 'probe.', 'up', 'no answer', 'bad', (v) => [num(v('rtt_ms')) &&
		'RTT ' + fmt(v('rtt_ms'), v('rtt_ms') < 10 ? 2 : 0) + ' ms', 'loss ' + fmt(v('loss_pct'), 0) + ' %']);
}
function renderFooter() {
	const a = S.agent || {};
	const bits = ['tegrawatch' + (a.version ? ' ' + a.version : '')];
	if (num(a.interval_ms)) { bits.push('every ' + a.interval_ms + ' ms'); }
	if (num(a.uptime_s) && S.snapAt) { bits.push('agent up ' + dur(a.uptime_s * 1000 + Date.now() - S.snapAt)); }
	setText($('ft-agent'), bits.join(' · '));
	setText($('ft-sample'), S.seq ? 'sample #' + S.seq + ' at ' + (S.ts || clock(S.timeMs)) : '');
	document.body.dataset.seq = S.seq;
}

