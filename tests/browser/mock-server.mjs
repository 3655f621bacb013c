// A stand-in for the agent's HTTP API, for testing the dashboard page alone.
//
// Serves the dashboard page at / and canned, generated responses for
// /api/v1/snapshot, /api/v1/history, /api/v1/alerts and the /api/v1/events
// stream, in the shapes the agent uses (docs/http.md). The data follow a
// short story like the demo recording: a board under GPU load heats up,
// throttles for a while, then recovers.
//
// As a module: `const mock = await startMock({...})`; mock.url, mock.requests,
// mock.openStreams() (event streams open now), mock.close(); its clock:
// mock.setRate(HZ) (0 stops it; `still: true` starts it stopped), mock.skipTo(SEQ); mock.holdHistory(),
// heldHistory() and releaseHistory() delay the history's answers. The page is the one the build assembles from
// web/dashboard/ and core/page/ (build/web/dashboard.html; `page` or --page
// names another). From the command line (for looking at the page by hand):
//   node tests/browser/mock-server.mjs [--port N] [--board full|minimal|thor] [--rate HZ] [--page FILE]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BUILT_PAGE = path.join(here, '..', '..', 'build', 'web', 'dashboard.html');
const T0 = Date.UTC(2025, 2, 14, 10, 0, 0); // sample 1, board time 10:00:00

function iso(ms) {
	return new Date(ms).toISOString().slice(0, 19);
}

// A deterministic wobble, so repeated runs draw the same charts.
function wob(seq, k) {
	return Math.sin(seq * 0.37 + k * 1.7) * 0.5 + Math.sin(seq * 0.091 + k) * 0.5;
}

// The full board: an Orin Nano Super in MAXN_SUPER, like the demo.
function fullSample(seq, o) {
	const loadFrom = 120;
	const thrFrom = o.throttleAt, thrTo = o.throttleAt + o.throttleLen; // [thrFrom, thrTo)
	let phase = 'idle';
	if (seq >= loadFrom && seq < thrFrom) {
		phase = 'load';
	} else if (seq >= thrFrom && seq < thrTo) {
		phase = 'throttle';
	} else if (seq >= thrTo) {
		phase = 'after';
	}
	let tj;
	if (phase === 'idle') {
		tj = 46.4 + 0.3 * wob(seq, 1);
	} else if (phase === 'load') {
		const x = (seq - loadFrom) / (thrFrom - loadFrom);
		tj = 46.5 + 48.4 * (1 - Math.exp(-3 * x)) / (1 - Math.exp(-3));
	} else if (phase === 'throttle') {
		tj = 95.3 + 0.6 * Math.sin((seq - thrFrom) / 6);
	} else {
		tj = 70 + 24 * Math.exp(-(seq - thrTo) / 120);
	}
	const busy = phase === 'load' || phase === 'throttle';
	const gpuFreq = phase === 'idle' ? 306 : phase === 'throttle' ? ((seq - thrFrom) % 30 < 20 ? 714 : 612) : 1020;
	const gpuLoad = busy ? 97 + Math.round(2 * wob(seq, 2)) : phase === 'after' ? 62 + Math.round(6 * wob(seq, 3)) : 2;
	const cpuA = phase === 'idle' ? 729 : phase === 'throttle' ? (gpuFreq === 714 ? 1344 : 1190) : 1728;
	const cpuB = phase === 'idle' ? 1036 : cpuA;
	const vin = phase === 'idle' ? 4800 : phase === 'load' ? 17200 : phase === 'throttle' ? 13800 : 11400;
	const r = (v, k) => Math.round(v * (1 + 0.03 * wob(seq, k)));
	const m = {
		'temp.cpu_c': +(tj - 0.9 + 0.1 * wob(seq, 4)).toFixed(3),
		'trip.cpu.passive_c': 95, 'trip.cpu.hot_c': 99, 'trip.cpu.critical_c': 104.5,
		'temp.gpu_c': +(tj - 0.05).toFixed(3),
		'temp.soc0_c': +(tj - 5.4).toFixed(3), 'temp.soc1_c': +(tj - 4.6).toFixed(3), 'temp.soc2_c': +(tj - 4.3).toFixed(3),
		'temp.tj_c': +tj.toFixed(3), 'trip.tj.passive_c': 95,
		'gpu.freq_mhz': gpuFreq, 'gpu.max_freq_mhz': 1020, 'gpu.min_freq_mhz': 306, 'gpu.hw_max_freq_mhz': 1020,
		'gpu.load_pct': gpuLoad,
		'emc.freq_mhz': 3199, 'emc.load_pct': busy ? 45 : 5,
		'ram.total_mb': 7620, 'ram.used_mb': busy || phase === 'after' ? 5350 : 1480,
		'swap.total_mb': 3810, 'swap.used_mb': 24, 'swap.cached_mb': 0,
		'power.vdd_in.mw': r(vin, 5), 'power.vdd_in.avg_mw': 9800, 'power.vdd_in.mv': 5200,
		'power.vdd_in.ma': Math.round(vin / 5.2), 'power.vdd_in.crit_ma': 7784, 'power.vdd_in.crit_alarm': 0,
		'power.vdd_in.max_alarm': 0,
		'power.vdd_cpu_gpu_cv.mw': r(vin * 0.45, 6), 'power.vdd_cpu_gpu_cv.avg_mw': 4400,
		'power.vdd_soc.mw': r(vin * 0.2, 7), 'power.vdd_soc.avg_mw': 2100,
		'oc.1.events': 0, 'oc.2.events': 0, 'oc.3.events': 2,
		'fan.0.pwm': busy ? 255 : 88, 'fan.0.rpm': busy ? 5100 : 2150,
		'nvpmodel.id': 2,
		'engine.ape.on': 1, 'engine.ape.freq_mhz': 200, 'engine.nvdec.on': 0,
		'throttle.active': phase === 'throttle' ? 1 : 0, 'throttle.thermal': phase === 'throttle' ? 1 : 0,
		'agent.samples_total': seq,
		// the host (docs/metrics.md#the-host): memory available, pressure, OOM kills, two disks, two interfaces
		'ram.available_mb': busy || phase === 'after' ? 2270 : 6140, 'oom.kills_total': 2,
		'pressure.cpu.some_avg10_pct': 1.5, 'pressure.memory.some_avg10_pct': 0.2, 'pressure.io.some_avg10_pct': 3.1,
		'filesystem.root.size_mb': 57344, 'filesystem.root.avail_mb': 5120, 'filesystem.root.used_pct': 91.2,
		'filesystem.root.readonly': 0, 'filesystem.root.full_eta_s': 18000,
		'filesystem.media_usb.size_mb': 30000, 'filesystem.media_usb.avail_mb': 21000,
		'filesystem.media_usb.used_pct': 30, 'filesystem.media_usb.readonly': 1,
		'emmc.mmcblk0.pre_eol': 1, 'emmc.mmcblk0.life_time_a_pct': 10,
		// eth0 receives 1.5 MB and sends 40 kB a second of the board's time (a sample is a second): 12 and 0.32 Mbit/s
		'network.eth0.up': 1, 'network.eth0.receive_bytes_total': 1500000 * seq,
		'network.eth0.transmit_bytes_total': 40000 * seq, 'network.eth0.receive_errors_total': 0,
		'network.eth0.transmit_errors_total': 0,
		'network.wlan0.up': 0, 'network.wlan0.receive_bytes_total': 77000, 'network.wlan0.transmit_bytes_total': 9000,
		'network.wlan0.wifi_signal_dbm': -71,
		// processes: (docs/metrics.md#processes): one up with its GPU memory, one down; host.probes: one answers
		'process.inference.up': 1, 'process.inference.count': 2, 'process.inference.restarts_total': 1,
		'process.inference.cpu_pct': 187.5, 'process.inference.resident_mb': 1843.2, 'process.inference.threads': 23,
		'process.inference.uptime_s': 7380, 'process.inference.gpu_memory_mb': 2150,
		'process.recorder.up': 0, 'process.recorder.count': 0, 'process.recorder.restarts_total': 3,
		'probe.broker.up': 1, 'probe.broker.rtt_ms': 0.84, 'probe.broker.loss_pct': 0,
		'probe.board2.up': 0, 'probe.board2.loss_pct': 100,
	};
	// the forecast (docs/prediction.md): a throttle predicted under load, a steady temperature after
	if (phase === 'load' && thrFrom - seq <= 300) {
		Object.assign(m, { 'throttle_eta.tj_s': thrFrom - seq, 'throttle_eta_error.tj_s': 4, 'steady_temp.tj_c': 101 });
	} else if (phase === 'after') {
		m['steady_temp.tj_c'] = 70;
	}
	if (busy) {
		Object.assign(m, { 'work.inference.count_total': 20 * seq, 'work.inference.rate_per_s': 20,
			'work.inference.joules_per_unit': 0.86, 'work.inference.above_idle_joules_per_unit': 0.62 });
	}
	for (let c = 0; c < 6; c++) {
		m['cpu.' + c + '.online'] = 1;
		m['cpu.' + c + '.freq_mhz'] = c < 4 ? cpuA : cpuB;
		m['cpu.' + c + '.max_freq_mhz'] = 1728;
		m['cpu.' + c + '.hw_max_freq_mhz'] = 1728;
		m['cpu.' + c + '.load_pct'] = Math.max(0, Math.round((busy ? 30 : 3) + 4 * wob(seq, 10 + c)));
	}
	m['cpu.load_pct'] = m['cpu.0.load_pct'];
	const throttle = { active: phase === 'throttle', reasons: {}, context: 'power mode MAXN_SUPER' };
	if (throttle.active) {
		throttle.reasons.thermal = 'tj at ' + tj.toFixed(1) + ' C >= passive trip 95.0 C; gpu at ' + gpuFreq +
			' MHz, ' + Math.round(100 - gpuFreq / 10.2) + '% below 1020 MHz under ' + gpuLoad + '% load';
	}
	return { metrics: m, throttle, power_mode: 'MAXN_SUPER' };
}

// A board with little: one temperature without a trip point, CPU clocks
// without ceilings, memory. No GPU clock, no rails, no power mode.
function minimalSample(seq) {
	const m = { 'temp.cpu_c': +(41 + wob(seq, 1)).toFixed(2), 'ram.total_mb': 3964, 'ram.used_mb': 1923 };
	for (let c = 0; c < 4; c++) {
		m['cpu.' + c + '.online'] = c < 3 ? 1 : 0;
		if (c < 3) {
			m['cpu.' + c + '.freq_mhz'] = 1224;
			m['cpu.' + c + '.load_pct'] = 5;
		}
	}
	m['cpu.load_pct'] = 5;
	return { metrics: m, throttle: { active: false, reasons: {}, context: '' }, power_mode: '' };
}

// Thor (issue 22): its GPU zone rail-gated (no reading), its load only from
// NVML (gpu.0.*), no sysfs GPU load; and a discrete GPU that fell off the bus.
function thorSample(seq) {
	const m = {
		'temp.cpu_c': 45.5, 'temp.tj_c': 46, 'trip.tj.passive_c': 99, 'zone.gpu.gated': 1,
		'gpu.freq_mhz': 1049, 'gpu.max_freq_mhz': 1575, 'gpu.hw_max_freq_mhz': 1575,
		'gpu.0.lost': 0, 'gpu.0.load_pct': 97, 'gpu.0.temp_c': 41, 'gpu.0.power_mw': 6600,
		'gpu.1.lost': 1,
		'ram.total_mb': 125455, 'ram.used_mb': 6479, 'power.vin.mw': 38240, 'power.vin.mv': 20000,
		'cpu.0.online': 1, 'cpu.0.freq_mhz': 1497.6, 'cpu.0.load_pct': 2, 'cpu.load_pct': 2,
		'agent.samples_total': seq,
	};
	return { metrics: m, throttle: { active: false, reasons: {}, context: 'power mode 120W' }, power_mode: '120W' };
}

const BOARDS = {
	thor: {
		board: { model: 'NVIDIA Jetson AGX Thor Developer Kit', soc: 'tegra264', module: 'p3834-0008', l4t: '38.4.0',
			jetpack: '7.1' },
		sample: thorSample,
	},
	full: {
		board: { model: 'NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super', soc: 'tegra234',
			module: 'p3767-0005', l4t: '36.4.3', jetpack: '6.2' },
		sample: fullSample,
	},
	minimal: { board: { model: 'Mock board without rails or GPU clock' }, sample: minimalSample },
};

export async function startMock(opts = {}) {
	const o = {
		port: 0, board: 'full', rate: 10, history: 600, dropAfter: 0, xss: false, page: BUILT_PAGE, ...opts,
	};
	o.throttleAt = opts.throttleAt ?? o.history + 40;
	o.throttleLen = opts.throttleLen ?? 60;
	const B = BOARDS[o.board];
	const requests = [];
	const streams = new Set();
	const cache = new Map();

	// The board's clock: samples come at clk.rate a second from clk.seq at clk.at (0: it stands still, as with
	// `still`). A test may stop it, start it, or move it on (the stream then sends every sample in between).
	const clk = { seq: o.history, at: Date.now(), rate: o.still ? 0 : o.rate };
	const current = () => clk.seq + Math.floor((Date.now() - clk.at) * clk.rate / 1000);
	function sample(seq) {
		let s = cache.get(seq);
		if (!s) {
			// stepAt/stepMs: the board's wall clock steps at sample stepAt, which carries the mark (issue 21)
			const stepped = o.stepAt && seq >= o.stepAt ? o.stepMs : 0;
			const t = T0 + (seq - 1) * 1000 + stepped;
			s = { seq, ts: iso(t), time_ms: t, ...B.sample(seq, o) };
			if (o.stepAt && seq === o.stepAt) {
				s.clock_step_ms = o.stepMs;
			}
			cache.set(seq, s);
		}
		return s;
	}
	// Alerts: a warning that has been firing since before the page opened and,
	// on the full board, the throttling alert 5 samples into the episode.
	const fireAt = o.throttleAt + 5, clearAt = o.throttleAt + o.throttleLen + 10;
	function alertObj(seq, transition) {
		const s = sample(seq);
		const firing = transition !== 'resolved';
		return {
			rule: 'throttling', metric: 'throttle.active', transition, status: firing ? 'firing' : 'resolved',
			severity: 'critical', previous_severity: firing ? 'none' : 'critical', value: firing ? 1 : 0, threshold: 1,
			absent: false, fingerprint: '5c0ffee5c0ffee01', at: s.ts, starts_at: sample(fireAt).ts,
			ends_at: firing ? null : s.ts,
			summary: 'demo-orin-nano is throttling: thermal: ' + (sample(fireAt).throttle.reasons.thermal || ''),
			description: 'Clocks are being reduced by the board itself (power mode MAXN_SUPER).', labels: {},
			throttle: s.throttle.reasons, power_mode: s.power_mode,
		};
	}
	const steady = {
		rule: 'temperature', metric: o.board === 'full' ? 'temp.gpu_c' : 'temp.cpu_c', transition: 'firing',
		status: 'firing', severity: 'warning', previous_severity: 'none', value: 86.25, threshold: 85, absent: false,
		fingerprint: '0123456789abcdef', at: sample(o.history - 100).ts, starts_at: sample(o.history - 100).ts, ends_at: null,
		summary: o.xss ? 'board: <img src=x onerror="window.__xss=1"><b>bold</b> is hot'
			: 'demo-orin-nano: temp.gpu_c is 86.25 C (warning at 85 C)',
		description: '', labels: {}, throttle: {}, power_mode: 'MAXN_SUPER',
	};
	function activeAlerts(seq) {
		const out = [steady];
		if (o.board === 'full' && seq >= fireAt && seq < clearAt) {
			out.push(alertObj(seq, 'firing'));
		}
		return out;
	}
	function recentAlerts(seq) {
		const out = [steady];
		if (o.board === 'full' && seq >= fireAt) {
			out.push(alertObj(fireAt, 'firing'));
		}
		if (o.board === 'full' && seq >= clearAt) {
			out.push(alertObj(clearAt, 'resolved'));
		}
		return out;
	}

	function send(res, code, type, body) {
		res.writeHead(code, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
		res.end(body);
	}
	const json = (res, obj) => send(res, 200, 'application/json', JSON.stringify(obj));
	// holdHistory(): history answers are made when asked but sent only at releaseHistory() (a slow agent)
	let held = null;

	const server = http.createServer((req, res) => {
		const u = new URL(req.url, 'http://localhost');
		requests.push(u.pathname + u.search);
		const seq = current();
		if (req.method !== 'GET' && req.method !== 'HEAD') {
			return send(res, 405, 'text/plain', 'method not allowed\n');
		}
		if (u.pathname === '/' || u.pathname === '/index.html') {
			return send(res, 200, 'text/html; charset=utf-8', fs.readFileSync(o.page));
		}
		if (u.pathname === '/api/v1/snapshot') {
			return json(res, {
				board: B.board,
				agent: { version: '0.0-mock', interval_ms: 1000, uptime_s: Math.round(seq / o.rate) },
				...sample(seq), alerts: activeAlerts(seq),
			});
		}
		if (u.pathname === '/api/v1/alerts') {
			return json(res, { active: activeAlerts(seq), recent: recentAlerts(seq) });
		}
		if (u.pathname === '/api/v1/history') {
			const metric = u.searchParams.get('metric') || '';
			const seconds = Math.min(3600, Number(u.searchParams.get('seconds')) || 3600);
			if (!(metric in sample(seq).metrics)) {
				return send(res, 404, 'application/json', '{"error":"unknown metric"}');
			}
			// as the agent's history: every point told at the wall clock the board has now (a step moves them all)
			const now = sample(seq).time_ms - (seq - 1) * 1000;
			const points = [];
			for (let k = Math.max(1, seq - seconds + 1); k <= seq; k++) {
				const s = sample(k);
				if (metric in s.metrics) {
					points.push([now + (k - 1) * 1000, s.metrics[metric]]);
				}
			}
			const v = points.map((p) => p[1]).sort((a, b) => a - b);
			return (held ? (r, o) => held.push(() => json(r, o)) : json)(res, {
				metric, seconds, interval_ms: 1000, points,
				stats: { count: v.length, min: v[0], mean: v.reduce((a, b) => a + b, 0) / (v.length || 1),
					max: v[v.length - 1], p95: v[Math.floor(0.95 * (v.length - 1))] },
			});
		}
		if (u.pathname === '/api/v1/events') {
			res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store',
				'X-Content-Type-Options': 'nosniff' });
			res.write(': tegrawatch mock\n\n');
			let next = current() + 1, sent = 0;
			const timer = setInterval(() => {
				const now = current();
				for (; next <= now; next++) {
					const s = sample(next);
					res.write('event: sample\ndata: ' + JSON.stringify(s) + '\n\n');
					if (o.board === 'full' && next === fireAt) {
						res.write('event: alert\ndata: ' + JSON.stringify(alertObj(next, 'firing')) + '\n\n');
					}
					if (o.board === 'full' && next === clearAt) {
						res.write('event: alert\ndata: ' + JSON.stringify(alertObj(next, 'resolved')) + '\n\n');
					}
					if (o.dropAfter && ++sent >= o.dropAfter) {
						// the stream drops: the page must come back by itself
						clearInterval(timer);
						streams.delete(res);
						res.end();
						return;
					}
				}
			}, Math.max(20, 1000 / o.rate / 2));
			streams.add(res);
			req.on('close', () => {
				clearInterval(timer);
				streams.delete(res);
			});
			return undefined;
		}
		return send(res, 404, 'text/plain', 'not found\n');
	});
	await new Promise((resolve) => server.listen(o.port, '127.0.0.1', resolve));
	const url = 'http://127.0.0.1:' + server.address().port + '/';
	return {
		url, requests, options: o, current,
		openStreams() {
			return streams.size;
		},
		setDropAfter(n) {
			o.dropAfter = n;
		},
		setRate(rate) {
			clk.seq = current();
			clk.at = Date.now();
			clk.rate = rate;
		},
		holdHistory() {
			held = held || [];
		},
		heldHistory() {
			return held ? held.length : 0;
		},
		releaseHistory() {
			const h = held || [];
			held = null;
			h.forEach((f) => f());
		},
		skipTo(seq) {
			clk.seq = Math.max(current(), seq);
			clk.at = Date.now();
		},
		close() {
			for (const r of streams) {
				r.destroy();
			}
			server.closeAllConnections?.();
			return new Promise((resolve) => server.close(resolve));
		},
	};
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const args = process.argv.slice(2);
	const opt = (name, def) => {
		const i = args.indexOf('--' + name);
		return i >= 0 ? args[i + 1] : def;
	};
	const mock = await startMock({ port: Number(opt('port', 0)), board: opt('board', 'full'),
		rate: Number(opt('rate', 10)), page: opt('page', BUILT_PAGE) });
	console.log('mock agent listening on ' + mock.url);
}
