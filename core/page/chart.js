/*
 * The chart kit of every tegrawatch page (the dashboard, the report): time
 * series on a <canvas>, legends, the helpers both pages need. The build
 * pastes it into each page (scripts/embed.c); it defines one name, `kit`.
 */
'use strict';
const kit = (function () {
	/* Elements with text, never markup: everything shown comes from data. */
	function h(tag, cls, text) {
		const e = document.createElement(tag);
		if (cls) { e.className = cls; }
		if (text !== undefined && text !== null) { e.textContent = String(text); }
		return e;
	}
	const num = (v) => typeof v === 'number' && isFinite(v);
	const clamp = (x, a, b) => Math.min(b, Math.max(a, x));
	const rootStyle = getComputedStyle(document.documentElement); /* live: follows the colour scheme */
	const cssVar = (n) => rootStyle.getPropertyValue(n).trim();
	/* the I-th series colour (--series-0..9), for series without a colour of their own */
	const color = (i) => cssVar('--series-' + (i % 10));
	function setData(el, k, v) {
		v = String(v);
		if (el.dataset[k] !== v) { el.dataset[k] = v; }
	}
	/* the first index of the sorted ARR whose value is >= X */
	function lowerBound(arr, x) {
		let lo = 0, hi = arr.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (arr[mid] < x) {
				lo = mid + 1;
			} else {
				hi = mid;
			}
		}
		return lo;
	}
	/* a round axis top at or above V */
	function niceCeil(v) {
		if (!(v > 0)) { return 1; }
		const p = Math.pow(10, Math.floor(Math.log10(v)));
		for (const k of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
			if (v <= k * p) { return k * p; }
		}
		return 10 * p;
	}
	function niceStep(range, maxTicks) {
		const raw = range / Math.max(1, maxTicks);
		const p = Math.pow(10, Math.floor(Math.log10(raw)));
		for (const k of [1, 2, 2.5, 5, 10]) {
			if (raw <= k * p) { return k * p; }
		}
		return 10 * p;
	}
	/* HH:MM[:SS] of MS shifted by OFFSET (the board's wall clock; 0 = UTC) */
	function hhmm(ms, offset, withSec) {
		const d = new Date(ms + offset);
		const p = (n) => String(n).padStart(2, '0');
		return p(d.getUTCHours()) + ':' + p(d.getUTCMinutes()) + (withSec ? ':' + p(d.getUTCSeconds()) : '');
	}
	const TIME_STEPS_MIN = [1, 2, 3, 5, 10, 15, 20, 30, 60, 120, 180, 240, 360, 720, 1440];
	const PAD = { l: 46, r: 38, t: 8, b: 20 }; /* the same on every chart: time axes line up */

	/*
	 * Draws a chart on CV. SPEC: t0, t1 (the window, epoch ms); series [{t, v, color, width, dash, step,
	 * area, right (0-100 % on the right axis), scale, projected (a forecast)}], a value that is not a number or
	 * a gap over gapMs breaks a line; bands [[from, to]] (shaded: throttling); unit, range(lo, hi) -> [y0, y1],
	 * right, lines [{v, label}] (trip points); offsetMs (added for labels); hover (a time to mark). Sets
	 * data-points, data-series (with points in the window; not projected), data-projected and data-bands.
	 * Returns {t0, t1, padL, pw} for hover, or null when there was nothing to draw.
	 */
	function drawChart(cv, spec) {
		const W = cv.clientWidth, H = cv.clientHeight, dpr = window.devicePixelRatio || 1;
		const { t0, t1 } = spec, offset = spec.offsetMs || 0, gap = spec.gapMs || Infinity;
		let points = 0, shown = 0, projected = 0, lo = Infinity, hi = -Infinity;
		const from = spec.series.map((s) => {
			const i0 = lowerBound(s.t, t0);
			let n = 0;
			for (let i = i0; i < s.t.length && s.t[i] <= t1; i++) {
				const v = s.v[i];
				if (!num(v)) { continue; }
				n++;
				if (!s.right) {
					lo = Math.min(lo, v * (s.scale || 1));
					hi = Math.max(hi, v * (s.scale || 1));
				}
			}
			if (s.projected) {
				projected += n;
			} else {
				points += n;
				shown += n > 0 ? 1 : 0;
			}
			return i0;
		});
		setData(cv, 'points', points);
		setData(cv, 'series', shown);
		setData(cv, 'projected', projected);
		setData(cv, 'bands', (spec.bands || []).length);
		if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) {
			cv.width = Math.round(W * dpr);
			cv.height = Math.round(H * dpr);
		}
		const g = cv.getContext('2d');
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.clearRect(0, 0, W, H);
		if (!(points + projected) || W < 50) { return null; }
		if (!isFinite(lo)) {
			lo = 0;
			hi = 1;
		}
		let [y0, y1] = spec.range(lo, hi);
		if (!(y1 > y0)) { y1 = y0 + 1; }
		const fg = cssVar('--muted'), grid = cssVar('--grid'), bad = cssVar('--bad');
		const padL = PAD.l, padT = PAD.t, pw = W - PAD.l - PAD.r, ph = H - PAD.t - PAD.b;
		const X = (t) => padL + (t - t0) / (t1 - t0 || 1) * pw;
		const Y = (v) => padT + ph - (v - y0) / (y1 - y0) * ph;
		const hline = (y) => {
			g.beginPath();
			g.moveTo(padL, y);
			g.lineTo(padL + pw, y);
			g.stroke();
		};
		const vline = (x) => {
			g.beginPath();
			g.moveTo(x, padT);
			g.lineTo(x, padT + ph);
			g.stroke();
		};
		g.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, sans-serif';
		g.lineWidth = 1;
		g.fillStyle = cssVar('--shade');
		for (const [a, b] of spec.bands || []) {
			g.fillRect(X(a), padT, Math.max(1, X(b) - X(a)), ph);
		}
		/* grid and axes */
		g.strokeStyle = grid;
		g.fillStyle = fg;
		g.textAlign = 'right';
		g.textBaseline = 'middle';
		const ys = niceStep(y1 - y0, Math.max(2, Math.floor(ph / 36)));
		for (let v = Math.ceil(y0 / ys) * ys; v <= y1 + 1e-9; v += ys) {
			const y = Math.round(Y(v)) + 0.5;
			hline(y);
			g.fillText(+v.toFixed(2) + (v === Math.ceil(y0 / ys) * ys ? ' ' + spec.unit : ''), padL - 5, y);
		}
		if (spec.right) {
			g.textAlign = 'left';
			for (let v = 0; v <= 100; v += 50) {
				g.fillText(v + (v === 0 ? ' %' : ''), padL + pw + 5, padT + ph - v / 100 * ph);
			}
		}
		const spanMin = (t1 - t0) / 60000;
		const stepMs = 60000 * (TIME_STEPS_MIN.find((s) => spanMin / s <= pw / 70) || 1440);
		g.textAlign = 'center';
		g.textBaseline = 'top';
		for (let t = Math.ceil((t0 + offset) / stepMs) * stepMs - offset; t <= t1; t += stepMs) {
			const x = Math.round(X(t)) + 0.5;
			vline(x);
			if (x > padL + 14 && x < padL + pw - 14) { g.fillText(hhmm(t, offset, false), x, padT + ph + 4); }
		}
		/* reference lines */
		for (const l of spec.lines || []) {
			if (l.v < y0 || l.v > y1) { continue; }
			const y = Math.round(Y(l.v)) + 0.5;
			g.strokeStyle = bad;
			g.setLineDash([5, 4]);
			hline(y);
			g.setLineDash([]);
			g.fillStyle = bad;
			g.textAlign = 'left';
			g.textBaseline = 'bottom';
			g.fillText(l.label, padL + 4, y - 2);
		}
		/* the series, clipped to the plot */
		g.save();
		g.beginPath();
		g.rect(padL, padT - 2, pw, ph + 4);
		g.clip();
		spec.series.forEach((s, k) => {
			const sc = s.scale || 1;
			const yOf = s.right ? (v) => padT + ph - clamp(v, 0, 100) / 100 * ph : (v) => Y(v * sc);
			g.strokeStyle = s.color;
			g.fillStyle = s.color;
			g.lineWidth = s.width || 1.4;
			g.setLineDash(s.dash ? [4, 3] : []);
			let run = [];
			const flush = () => {
				if (run.length) { drawRun(g, s, run, X, yOf, padT + ph); }
				run = [];
			};
			/* from the point before the window: the line enters from the left edge */
			for (let i = Math.max(0, from[k] - 1); i < s.t.length; i++) {
				if (!num(s.v[i])) {
					flush();
					continue;
				}
				if (run.length && s.t[i] - s.t[run[run.length - 1]] > gap) { flush(); }
				run.push(i);
			}
			flush();
		});
		g.setLineDash([]);
		g.restore();
		/* crosshair */
		const ht = spec.hover;
		if (ht !== undefined && ht >= t0 && ht <= t1) {
			const x = Math.round(X(ht)) + 0.5;
			g.strokeStyle = fg;
			vline(x);
			g.fillStyle = fg;
			g.textAlign = x > padL + pw - 40 ? 'right' : 'left';
			g.textBaseline = 'top';
			g.fillText(hhmm(ht, offset, true), x + (g.textAlign === 'left' ? 4 : -4), padT + 1);
		}
		return { t0, t1, padL, pw };
	}
	/* one unbroken stretch of S: the indexes RUN */
	function drawRun(g, s, run, X, yOf, base) {
		g.beginPath();
		run.forEach((i, j) => {
			const x = X(s.t[i]), y = yOf(s.v[i]);
			if (j === 0) {
				g.moveTo(x, y);
			} else {
				if (s.step) { g.lineTo(x, yOf(s.v[run[j - 1]])); }
				g.lineTo(x, y);
			}
		});
		if (s.area && run.length > 1) {
			g.globalAlpha = 0.16;
			g.lineTo(X(s.t[run[run.length - 1]]), base);
			g.lineTo(X(s.t[run[0]]), base);
			g.closePath();
			g.fill();
			g.globalAlpha = 0.55;
			g.lineWidth = 1;
			g.stroke();
			g.globalAlpha = 1;
		} else {
			g.stroke();
		}
	}
	/*
	 * The legend of SERIES in the list UL: a swatch and the label per series,
	 * built again only when the series change. Returns one <b> per series,
	 * for its value.
	 */
	function legend(ul, series) {
		const sig = series.map((s) => s.key + '\u0001' + s.label).join('\n');
		if (ul._sig !== sig) {
			ul._sig = sig;
			ul.replaceChildren();
			ul._items = series.map((s) => {
				const li = h('li'), sw = h('span', 'sw' + (s.area ? ' area' : '') + (s.dash ? ' dash' : '')), b = h('b');
				sw.style.background = s.color;
				li.append(sw, document.createTextNode(s.label + ' '), b);
				ul.append(li);
				return b;
			});
		}
		return ul._items;
	}
	return Object.freeze({ h, num, clamp, cssVar, color, lowerBound, niceCeil, hhmm, drawChart, legend });
})();
