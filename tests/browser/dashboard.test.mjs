// The dashboard served by the real agent on the demo board, in headless
// Chromium (Debian's package, driven by playwright-core).
//
//   node tests/browser/dashboard.test.mjs TEGRAWATCH SOURCE_ROOT [OUTDIR]
//
// Runs `tegrawatch run --demo --speed 20` with the demo rules and the web
// server on a free loopback port, on a clock the test drives (tegrawatch-driven,
// next to TEGRAWATCH): its ticks of 50 ms pass in 2 ms of real time up to 40
// samples before the episode, while Chromium starts, then in 25 ms. The demo
// recording throttles on samples 424-548 (configs/demo/README.md). The page is
// opened before the episode and watched through it; every look is checked
// against the sample the page says it shows. Screenshots of the episode go to
// OUTDIR (the test build directory under meson): dashboard.png (desktop),
// dashboard-phone.png.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { loadPlaywright, launch, watch, readState, inkedPixels, until, checker, freePort, sleep, drivenBin,
	drivenClock } from './lib.mjs';

const [bin, srcRoot, outArg] = process.argv.slice(2);
if (!bin || !srcRoot) {
	console.error('usage: dashboard.test.mjs TEGRAWATCH SOURCE_ROOT [OUTDIR]');
	process.exit(2);
}
const outdir = outArg || os.tmpdir();
const MODEL = 'NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super';
const FIRST = 424, LAST = 548; // throttled samples, inclusive
const c = checker();
const pw = await loadPlaywright();

// The demo configuration with its includes made absolute, plus the web server.
const port = await freePort();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tegrawatch-browser-'));
const demoDir = path.join(path.resolve(srcRoot), 'configs', 'demo');
let cfg = fs.readFileSync(path.join(demoDir, 'tegrawatch.yaml'), 'utf8');
cfg = cfg.replace(/^(\s*-\s*)(\.\.\/rules\.d\/\S+)/m, (m, lead, rel) => lead + path.join(demoDir, rel));
if (/^web:/m.test(cfg)) {
	console.error('configs/demo/tegrawatch.yaml has a web: section now; adjust this test');
	process.exit(1);
}
cfg += '\nweb:\n  listen: 127.0.0.1:' + port + '\n';
const cfgPath = path.join(tmp, 'tegrawatch.yaml');
fs.writeFileSync(cfgPath, cfg);

const base = 'http://127.0.0.1:' + port;
const agent = spawn(drivenBin(bin), ['run', '--demo', '--speed', '20', '-c', cfgPath],
	{ stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: { ...process.env, TEGRAWATCH_DRIVEN_CLOCK: '3' } });
const clock = drivenClock(agent);
let stderr = '', exited = null;
agent.stderr.on('data', (d) => {
	stderr = (stderr + d).slice(-8000);
});
agent.on('exit', (code, sig) => {
	exited = sig || code;
});

let status = 1, ctl = null;
try {
	await until('the agent to serve ' + base, async () => {
		if (exited !== null) {
			throw new Error('tegrawatch exited (' + exited + ') before serving:\n' + stderr);
		}
		try {
			const r = await fetch(base + '/api/v1/snapshot');
			return r.ok;
		} catch (e) {
			return false;
		}
	}, 20000, 100);

	// the agent's clock to 40 samples before the episode (it stands still there) while Chromium starts
	[, ctl] = await Promise.all([clock('run ' + (FIRST - 41) * 50 + ' 2'), launch(pw)]);
	const desk = await ctl.context.newPage();
	const phone = await ctl.context.newPage();
	await phone.setViewportSize({ width: 390, height: 844 });
	const wd = watch(desk, base), wp = watch(phone, base);
	await desk.goto(base + '/');
	await phone.goto(base + '/');
	await desk.bringToFront(); // the page watched renders every frame (one behind is drawn once a second)

	// Every banner the page shows, as it shows it: a look from the test can come late on a loaded machine
	// (a screenshot alone can take longer than the 3 s episode), the page's own record cannot.
	await desk.evaluate(() => {
		const b = document.getElementById('throttle-banner');
		window.bannerLog = [];
		new MutationObserver(() => window.bannerLog.push({ seq: Number(b.dataset.seq || 0), banner: b.dataset.state }))
			.observe(b, { attributes: true, attributeFilter: ['data-seq', 'data-state'] });
	});
	const first = await until('the first sample on the page', async () => {
		const s = await readState(desk);
		return s.seq > 0 ? s : null;
	}, 15000);
	c(first.model === MODEL, 'header shows the demo board model', first.model);
	c(first.powerMode === 'MAXN_SUPER', 'header shows the power mode', first.powerMode);
	const meta = await desk.textContent('#board-meta');
	c(meta.includes('L4T 36.4.3') && meta.includes('JetPack 6.2'), 'header shows L4T and JetPack', meta);
	c(first.seq < FIRST, 'the page was up before the episode (sample ' + first.seq + ')', first.seq);

	// Watch until the throttling alert has resolved (clear_for 10 s after sample 548), a sample each 25 ms: the
	// episode lasts about 3 s of wall time. The screenshots (seconds on a loaded machine, the replay going on
	// meanwhile) wait until six looks have seen it, so the looks the checks below ask for are never lost to them.
	await clock('pace 25');
	const seen = [];
	let shot = null;
	await until('the throttling alert to resolve', async () => {
		const s = await readState(desk);
		seen.push(s);
		const looksInEpisode = seen.filter((x) => x.seq >= FIRST && x.seq <= LAST).length;
		if (!shot && looksInEpisode > 5 && s.banner === 'throttled' &&
			s.alerts.some((a) => a.rule === 'throttling' && a.status === 'firing') &&
			s.points.temp > 0 && s.points.gpu > 0 && s.points.power > 0) {
			shot = path.join(outdir, 'dashboard.png');
			await desk.screenshot({ path: shot, fullPage: true });
			await phone.screenshot({ path: path.join(outdir, 'dashboard-phone.png'), fullPage: true });
			shot = { seq: s.seq, path: shot };
		}
		return s.seq > LAST + 25 && !s.alerts.some((a) => a.rule === 'throttling') ? s : null;
	}, 90000);
	// the rest looks at a still page: the replay, going on, would start its recording again (907 samples) and
	// heat up once more, on a loaded machine within the looks below
	await clock('pause');

	const shown = (await desk.evaluate(() => window.bannerLog)).filter((s) => s.seq > 0);
	const before = shown.filter((s) => s.seq < FIRST);
	const during = shown.filter((s) => s.seq >= FIRST && s.seq <= LAST);
	const after = shown.filter((s) => s.seq > LAST);
	c(before.length > 0 && before.every((s) => s.banner === 'ok'),
		'banner is green before the episode (' + before.length + ' samples shown)', before.find((s) => s.banner !== 'ok'));
	c(during.length > 5 && during.every((s) => s.banner === 'throttled'),
		'banner is red during the episode (' + during.length + ' samples shown)',
		during.find((s) => s.banner !== 'throttled'));
	const looked = seen.filter((s) => s.seq >= FIRST && s.seq <= LAST);
	c(looked.length > 0 && looked.every((s) => s.reasons.some(([k, text]) => k === 'thermal' && /passive trip/.test(text))),
		'red banner gives the thermal reason with its explanation', looked[0] && looked[0].reasons);
	c(after.length > 0 && after.every((s) => s.banner === 'ok'), 'banner is green again after the episode',
		after.find((s) => s.banner !== 'ok'));
	const firing = seen.filter((s) => s.alerts.some((a) => a.rule === 'throttling' && a.severity === 'critical' &&
		a.status === 'firing'));
	c(firing.length > 0 && firing.every((s) => s.seq >= FIRST), 'the throttling alert is listed while it fires',
		firing.length);
	const alertText = firing.length ? firing[0].alerts.find((a) => a.rule === 'throttling').text : '';
	c(/demo-orin-nano is throttling: thermal/.test(alertText), 'the alert shows its summary', alertText);
	const last = seen[seen.length - 1];
	c(!last.alerts.some((a) => a.rule === 'throttling'), 'the resolved alert leaves the list');
	// history and live points join without a hole or a double: one point per sample and series
	c(last.points.temp === 6 * last.seq && last.points.gpu === 3 * last.seq && last.points.power === 3 * last.seq,
		'the charts hold every sample once (' + last.seq + ' samples)', { seq: last.seq, points: last.points });
	c(seen.some((s) => s.alerts.some((a) => a.rule === 'temperature')), 'the temperature alerts are listed too');

	for (const id of ['chart-temp', 'chart-gpu', 'chart-power']) {
		const pts = Number(await desk.getAttribute('#' + id, 'data-points'));
		const ink = await inkedPixels(desk, id);
		c(pts > 400 && ink > 1000, id + ' has data (' + pts + ' points, ' + ink + ' px drawn)', { pts, ink });
	}
	// the chart counts its data apart from the forecasts to the trip that a heating stretch adds (samples 201-430 of
	// each lap of the recording; a page paused late may be in the next lap: CI-like runs 15 and 38)
	const temp = await desk.evaluate(() => ({
		series: Number(document.getElementById('chart-temp').dataset.series),
		forecasts: document.querySelectorAll('#lg-temp .sw.dash').length,
		projected: Number(document.getElementById('chart-temp').dataset.projected),
	}));
	c(temp.series === 6 && (temp.forecasts > 0) === (temp.projected > 0), 'temperature chart has the six demo sensors',
		temp);
	const temps = await desk.$$eval('#temps .m', (rows) => rows.map((r) => r.dataset.key));
	c(temps[0] === 'tj' && temps.length === 6, 'a temperature bar per sensor, junction first', temps);
	const note = await desk.textContent('#throttle-note');
	c(/Last throttled until/.test(note), 'the green banner says when the board last throttled', note);
	const pwidth = await phone.evaluate(() => document.documentElement.scrollWidth);
	c(pwidth <= 390, 'phone width: no horizontal scrolling', pwidth);

	// the day view: the history's tier 1, a point a recorded minute per sensor (the demo runs 3 s a minute)
	await desk.click('#range-day');
	const day = await until('the day view', async () => {
		const span = await desk.textContent('#hist-span');
		const pts = Number(await desk.getAttribute('#chart-temp', 'data-points'));
		const s = await readState(desk);
		return /per minute/.test(span) && pts > 0 ? { span, pts, seq: s.seq } : null;
	}, 10000);
	const mins = day.seq / 60;
	c(day.pts >= 6 * Math.floor(mins - 1) && day.pts <= 6 * Math.ceil(mins + 2),
		'the day view draws a point a minute per sensor (' + day.pts + ' points at sample ' + day.seq + ')', day);
	c(wd.requests.some((u) => u.includes('/api/v1/history?') && u.includes('tier=1')),
		'the day view asks the history for its minutes');
	await desk.click('#range-hour');
	const hour = await until('the hour view again', async () => {
		const pts = Number(await desk.getAttribute('#chart-temp', 'data-points'));
		return pts > 6 * 400 ? pts : null;
	}, 5000);
	c(hour > 6 * 400, 'the hour view draws every sample again', hour);

	c(shot !== null, 'screenshots during the episode (sample ' + (shot && shot.seq) + ')');
	if (shot) {
		console.log('# screenshot: ' + shot.path);
		console.log('# screenshot: ' + path.join(outdir, 'dashboard-phone.png'));
	}
	const errors = wd.errors.concat(wp.errors), foreign = wd.foreign.concat(wp.foreign);
	c(errors.length === 0, 'no console errors', errors);
	c(foreign.length === 0, 'no request to any origin but the agent\'s (' + wd.requests.length + ' requests)', foreign);
	status = c.done();
} catch (e) {
	console.log('not ok - ' + (e && e.stack ? e.stack : e));
	if (stderr) {
		console.log('# tegrawatch stderr (last lines):\n' + stderr.split('\n').slice(-15).map((l) => '#   ' + l).join('\n'));
	}
	c(false, 'the test ran to its end');
	status = c.done();
} finally {
	if (ctl) {
		await ctl.close();
	}
	if (exited === null) {
		await clock('real').catch(() => {}); // a clean stop waits on its clock
		agent.kill('SIGTERM');
		const gone = await Promise.race([new Promise((r) => agent.once('exit', () => r(true))), sleep(5000).then(() => false)]);
		if (!gone) {
			agent.kill('SIGKILL');
		}
	}
	fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
