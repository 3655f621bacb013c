// The HTML report (tegrawatch report --html) opened from a file in headless
// Chromium: charts drawn with the throttle episode marked, tables with the
// expected content, no request at all beyond the file, no console errors.
// Then the comparison page of the demo against a cooler variant.
//
//   node tests/browser/report.test.mjs TEGRAWATCH SOURCE_ROOT [OUTDIR]
// Screenshots go to OUTDIR (default: the system temp directory).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { loadPlaywright, launch, watch, inkedPixels, checker } from './lib.mjs';

const [bin, src, outdir = os.tmpdir()] = process.argv.slice(2);
const c = checker();
const pw = await loadPlaywright();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tegrawatch-report-'));
const demo = path.join(src, 'configs', 'demo');
const page1 = path.join(tmp, 'report.html');
execFileSync(bin, ['report', path.join(demo, 'tegrastats.log'), '--root', path.join(demo, 'root'),
	'-c', path.join(demo, 'tegrawatch.yaml'), '--html', page1]);

const html = fs.readFileSync(page1, 'utf8');
c(!/\b(src|href)\s*=\s*["']?(https?:)?\/\//i.test(html), 'the page names no external asset');
c(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(html), 'the page never writes markup from strings');

// B: the demo 10 C cooler, never capped (as in integration/test_report.py)
const cooler = fs.readFileSync(path.join(demo, 'tegrastats.log'), 'utf8').split('\n')
	.filter((l) => l.trim() && !l.startsWith('#'))
	.map((l) => l.replace(/\b(cpu|soc0|soc1|soc2|gpu|tj)@([0-9.]+)C/g, (m, n, v) => n + '@' + (+(+v - 10).toFixed(3)) + 'C')
		.replace(/GR3D_FREQ (\d+)%@\[(612|714)\]/, 'GR3D_FREQ $1%@[1020]').replace(/%@(1344|1190)\b/g, '%@1728'));
const coolerLog = path.join(tmp, 'cooler.log');
fs.writeFileSync(coolerLog, cooler.join('\n') + '\n');
const page2 = path.join(tmp, 'compare.html');
execFileSync(bin, ['report', '--compare', path.join(demo, 'tegrastats.log'), coolerLog, '--html', page2]);

// C: a soak verdict over the demo (it throttles: exit status 1, two criteria fail)
const crit = path.join(tmp, 'criteria.yaml');
fs.writeFileSync(crit, 'criteria:\n  - metric: temp.tj_c\n    max_below: 101\n  - no_throttle: true\n' +
	'  - metric: throttle_eta.*_s\n    min_above: 120\n');
const page3 = path.join(tmp, 'criteria.html');
let critStatus = 0;
try {
	execFileSync(bin, ['report', path.join(demo, 'tegrastats.log'), '--root', path.join(demo, 'root'), '--criteria', crit,
		'--html', page3], { stdio: 'ignore' });
} catch (e) {
	critStatus = e.status;
}
c(critStatus === 1, 'report --criteria exits 1 when a criterion fails', critStatus);

// D: a recording of a real host (the host source's metrics, as in integration/test_report.py): memory, OOM kills,
// a file system filling, a link down for 3 s
const hostRec = path.join(tmp, 'host.jsonl');
const hostLines = ['{"tegrawatch_recording":1,"version":"x","board":null}'];
[[6000, 3, 90.0, 1600, null, 1], [2500, 4, 92.5, 1200, 21000, 0], [800, 4, 93.5, 1040, 19800, 0], [1200, 6, 93.0, 1120, null, 0],
	[4000, 6, 92.0, 1280, null, 1], [5900, 6, 91.0, 1440, null, 1]].forEach(([avail, kills, pct, free, eta, up], i) => {
	const m = { 'ram.available_mb': avail, 'oom.kills_total': kills, 'filesystem.root.used_pct': pct, 'filesystem.root.avail_mb': free,
		'filesystem.root.readonly': 0, 'network.eth0.up': up, 'temp.tj_c': 50 };
	if (eta !== null) { m['filesystem.root.full_eta_s'] = eta; }
	hostLines.push(JSON.stringify({ seq: i + 1, time_ms: 1764374400000 + 1000 * i, power_mode: '15W', metrics: m,
		throttle: { active: false, reasons: {}, context: '' } }));
});
fs.writeFileSync(hostRec, hostLines.join('\n') + '\n');
const page4 = path.join(tmp, 'host.html');
execFileSync(bin, ['report', hostRec, '--html', page4], { stdio: 'ignore' });

const { context, close } = await launch(pw);
let status = 1;
try {
	{
		const page = await context.newPage();
		const url = pathToFileURL(page1).href;
		const w = watch(page, url);
		await page.goto(url);
		await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
		c(w.requests.length === 1 && w.requests[0] === url, 'the only request is the file itself', w.requests);
		c(w.errors.length === 0, 'no console or page errors', w.errors);
		const sub = await page.textContent('#subtitle');
		c(sub.includes('Orin Nano') && sub.includes('900 samples'), 'subtitle names the board and the samples', sub);
		const kpi = await page.textContent('.kpi[data-key="throttle"]');
		c(kpi.includes('125 s') && kpi.includes('1 episode)'), 'summary shows 125 s throttled in 1 episode', kpi);
		for (const id of ['temp', 'gpu', 'cpu', 'power']) {
			const d = await page.$eval('#chart-' + id, (e) => ({ ...e.dataset }));
			const ink = await inkedPixels(page, 'chart-' + id);
			c(Number(d.points) > 0 && Number(d.series) > 0 && ink > 500, 'chart ' + id + ' is drawn (' + d.points + ' points, ' + d.series + ' series)', { d, ink });
			c(d.bands === '1', 'chart ' + id + ' marks the throttle episode', d);
		}
		const tempSeries = await page.$eval('#chart-temp', (e) => Number(e.dataset.series));
		c(tempSeries === 6, 'one temperature line per sensor', tempSeries);
		const legend = await page.textContent('#card-temp');
		c(legend.includes('gpu (max 100.1 °C)'), 'the temperature legend gives the peak', legend);
		// the shaded band: red-tinted pixels inside the episode, none well before it
		const tint = await page.evaluate(() => {
			const cv = document.getElementById('chart-temp');
			const g = cv.getContext('2d'), dpr = window.devicePixelRatio || 1;
			const W = cv.clientWidth, pw = W - 46 - 38;
			const at = (frac) => {
				const x = Math.round((46 + frac * pw) * dpr), y = Math.round(20 * dpr);
				return g.getImageData(x, y, 1, 1).data[3];
			};
			return { inside: at((423 + 60) / 899), before: at(60 / 899) };
		});
		c(tint.inside > 0 && tint.before === 0, 'the episode is shaded on the chart, the warm-up is not', tint);
		const episodes = await page.$$eval('#episodes tbody tr', (rows) => rows.map((r) => [r.dataset.reasons, r.textContent]));
		c(episodes.length === 1 && episodes[0][0] === 'thermal' && episodes[0][1].includes('125'), 'episode table: one thermal episode of 125 s', episodes);
		const peaks = await page.$$eval('#peaks tbody tr', (rows) => rows.map((r) => [r.dataset.sensor, r.cells[1].textContent, r.cells[3].textContent]));
		c(peaks.some(([s, max, trip]) => s === 'gpu' && max === '100.062' && trip === '99'), 'peak table: gpu 100.062 against its 99 C throttle trip', peaks);
		const rails = await page.$$eval('#energy tbody tr', (rows) => rows.map((r) => r.dataset.rail));
		c(rails.join() === 'vdd_in,vdd_cpu_gpu_cv,vdd_soc', 'energy table: the three rails', rails);
		const alerts = await page.$$eval('#alerts tbody tr', (rows) => rows.map((r) => [r.dataset.rule, r.dataset.transition]));
		c(alerts.some(([r, t]) => r === 'input-power-high' && t === 'firing'), 'alert timeline lists the input power alert firing', alerts.length);
		const recs = await page.$$eval('#recommendations li', (lis) => lis.map((l) => [l.dataset.id, l.textContent]));
		c(recs.length === 1 && recs[0][0] === 'thermal-throttling' && recs[0][1].includes('evidence'), 'the recommendation with its evidence', recs);
		const metrics = await page.$$eval('#metrics tbody tr', (rows) => rows.length);
		c(metrics > 80, 'every metric has a row (' + metrics + ')', metrics);
		c(await page.$('#host') === null, 'no host card for a recording without the host\'s metrics');
		const shot = path.join(outdir, 'report.png');
		await page.screenshot({ path: shot, fullPage: true });
		console.log('screenshot: ' + shot);
		await page.close();
	}
	{
		const page = await context.newPage();
		const url = pathToFileURL(page2).href;
		const w = watch(page, url);
		await page.goto(url);
		await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
		c(w.requests.length === 1 && w.errors.length === 0, 'comparison: no other request, no errors', w);
		const verdict = await page.textContent('#verdict');
		c(verdict.includes('B ran 10.0 C cooler') && verdict.includes('A throttled 125 s'), 'comparison: the verdict', verdict);
		const tj = await page.$eval('#compare-metrics tr[data-metric="temp.tj_c"]', (r) => r.cells[5].textContent);
		c(tj === '-10', 'comparison: tj max 10 C lower in B', tj);
		const bands = await page.$$eval('canvas', (cs) => cs.map((e) => e.id + ':' + e.dataset.bands));
		c(bands.includes('chart-a-temp:1') && bands.includes('chart-b-temp:0'), 'comparison: A marks its episode, B has none', bands);
		const shot = path.join(outdir, 'report-compare.png');
		await page.screenshot({ path: shot, fullPage: true });
		console.log('screenshot: ' + shot);
		await page.close();
	}
	{
		const page = await context.newPage();
		const url = pathToFileURL(page3).href;
		const w = watch(page, url);
		await page.goto(url);
		await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
		c(w.errors.length === 0, 'criteria page: no console or page errors', w.errors);
		const rows = await page.$$eval('#criteria tr[data-criterion]', (rs) => rs.map((r) => [r.dataset.criterion, r.dataset.pass]));
		c(JSON.stringify(rows) === JSON.stringify([['temp.tj_c max below 101', 'true'], ['no throttle', 'false'],
			['throttle_eta.*_s min above 120', 'false']]), 'the criteria table says pass or fail for each', rows);
		const head = await page.textContent('#criteria >> xpath=ancestor::section//h2');
		c(head === 'Criteria: FAIL', 'its heading gives the verdict', head);
		await page.close();
	}
	{
		const page = await context.newPage();
		const url = pathToFileURL(page4).href;
		const w = watch(page, url);
		await page.goto(url);
		await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
		c(w.requests.length === 1 && w.errors.length === 0, 'host report: no other request, no errors', w);
		const cells = (sel) => page.$$eval(sel, (rows) => rows.map((r) => [...r.cells].map((x) => x.textContent)));
		const mem = await cells('#host-memory tbody tr');
		c(JSON.stringify(mem) === JSON.stringify([['memory available MiB', '800', '6000', '5900'], ['OOM kills during the run', '', '', '3']]),
			'host card: memory available least, most, at the end; the OOM kills of the run', mem);
		const fsRows = await cells('#host-filesystems tbody tr');
		c(JSON.stringify(fsRows) === JSON.stringify([['root', '90', '93.5', '91', '1440', '5.5 h', 'no']]),
			'host card: the file system\'s use, free space and soonest time to full', fsRows);
		const links = await cells('#host-links tbody tr');
		c(JSON.stringify(links) === JSON.stringify([['eth0', '1', '3 s', 'up']]), 'host card: the link\'s downs and time down', links);
		const shot = path.join(outdir, 'report-host.png');
		await page.screenshot({ path: shot, fullPage: true });
		console.log('screenshot: ' + shot);
		await page.close();
	}
	status = c.done();
} catch (e) {
	console.log('not ok - ' + e.stack);
} finally {
	await close();
	fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
