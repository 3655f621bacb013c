// The dashboard's host cards served by the real agent on this machine, in
// headless Chromium: processes, probes, disks and network.
//
//   node tests/browser/dashboard-host.test.mjs TEGRAWATCH [OUTDIR]
//
// One agent watches two processes (a copy of sleep the test starts, kills and
// starts again, and a name nothing runs under), probes two loopback TCP ports
// (one the test listens on, one nothing listens on), the root file system and
// lo. A second agent has no processes: and no host.probes: its page must show
// neither card. Every step waits for what the page shows; the screenshot
// goes to OUTDIR as dashboard-host.png.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { loadPlaywright, launch, watch, until, checker, freePort, sleep } from './lib.mjs';

const [bin, outArg] = process.argv.slice(2);
if (!bin) {
	console.error('usage: dashboard-host.test.mjs TEGRAWATCH [OUTDIR]');
	process.exit(2);
}
const outdir = outArg || os.tmpdir();
const c = checker();
const pw = await loadPlaywright();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tegrawatch-browser-host-'));

// the program watched: sleep under a name (its comm) no other process on the machine has
const tag = String(Math.floor(Math.random() * 10000)).padStart(4, '0');
const appBin = path.join(tmp, 'twdash' + tag);
fs.copyFileSync('/bin/sleep', appBin);
fs.chmodSync(appBin, 0o755);
const children = [];
const startApp = () => {
	const p = spawn(appBin, ['600'], { stdio: 'ignore' });
	children.push(p);
	return p;
};

// a port that answers and one nothing listens on
const server = net.createServer((s) => s.destroy());
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const openPort = server.address().port, closedPort = await freePort();

const agents = [];
async function startAgent(name, body) {
	const port = await freePort();
	const cfgPath = path.join(tmp, name + '.yaml');
	fs.writeFileSync(cfgPath, 'agent:\n  state_file: ""\nweb:\n  listen: 127.0.0.1:' + port + '\n' + body);
	const a = { base: 'http://127.0.0.1:' + port, stderr: '', exited: null };
	a.proc = spawn(bin, ['run', '-c', cfgPath], { stdio: ['ignore', 'ignore', 'pipe'] });
	a.proc.stderr.on('data', (d) => {
		a.stderr = (a.stderr + d).slice(-8000);
	});
	a.proc.on('exit', (code, sig) => {
		a.exited = sig || code;
	});
	agents.push(a);
	await until(name + ' to serve ' + a.base, async () => {
		if (a.exited !== null) {
			throw new Error(name + ' exited (' + a.exited + ') before serving:\n' + a.stderr);
		}
		return fetch(a.base + '/api/v1/snapshot').then((r) => r.ok, () => false);
	}, 20000, 100);
	return a;
}

// each row of a card: [key, state, text]
const rows = (page, box) => page.$$eval('#' + box + ' .m', (rs) => rs.map((r) => [r.dataset.key, r.dataset.state, r.textContent]));
const row = async (page, box, key) => (await rows(page, box)).find((r) => r[0] === key) || null;

let status = 1, ctl = null;
try {
	let app = startApp();
	const [full, bare] = await Promise.all([
		startAgent('full', 'sources:\n  processes_interval: 1s\nprocesses:\n  - name: App Server\n    comm: twdash' + tag +
			'\n  - name: ghost\n    comm: twghost' + tag + '\nhost:\n  filesystems:\n    interval: 1s\n    include: ["/"]\n' +
			'  network:\n    include: ["lo"]\n  probes:\n' +
			'    - {name: listener, host: 127.0.0.1, port: ' + openPort + ', interval: 1s}\n' +
			'    - {name: closed, host: 127.0.0.1, port: ' + closedPort + ', interval: 1s}\n'),
		startAgent('bare', ''),
	]);
	ctl = await launch(pw);
	const page = await ctl.context.newPage(), other = await ctl.context.newPage();
	const w = watch(page, full.base), wo = watch(other, bare.base);
	await page.goto(full.base + '/');
	await other.goto(bare.base + '/');
	await page.bringToFront(); // the page watched renders every frame

	// CPU % comes from the second scan on
	const up = await until('the running process with its figures', async () => {
		const r = await row(page, 'procs', 'app_server');
		return r && r[1] === 'up' && /CPU \d/.test(r[2]) ? r : null;
	}, 20000);
	c(/^app_serverup1 process · CPU \d+\.\d % · \d+\.\d MiB resident · 1 thread · up \d[^·]* · 0 restarts$/.test(up[2]),
		'processes card: the running one is up, with its count, CPU, resident memory, threads, uptime and restarts', up);
	const rss = Number(/(\d+\.\d) MiB/.exec(up[2])[1]);
	c(rss > 0, 'its resident memory is above 0 (' + rss + ' MiB)', up[2]);
	const ghost = await row(page, 'procs', 'ghost');
	c(ghost && ghost[1] === 'down' && ghost[2] === 'ghostdown0 restartsnot running',
		'processes card: the one that never ran is down, marked not running', ghost);

	const probes = await until('both probes answered or not', async () => {
		const rs = await rows(page, 'probes');
		const l = rs.find((r) => r[0] === 'listener'), cl = rs.find((r) => r[0] === 'closed');
		return l && cl && l[1] === 'up' && cl[1] === 'down' ? { l, cl, n: rs.length } : null;
	}, 20000);
	// (an attempt lost to a loaded machine's late sample may count in the loss; the last one answered)
	c(/^listenerupRTT \d+(\.\d\d)? ms · loss \d+ %$/.test(probes.l[2]), 'probes card: the open port is up, with RTT and loss',
		probes.l);
	c(/^closeddownloss 100 %no answer$/.test(probes.cl[2]), 'probes card: the closed port is down, all lost, marked', probes.cl);
	c(probes.n === 2, 'probes card: one row per probe', probes.n);

	// the other host cards, on this machine's root and lo (lo carries the probes' traffic)
	const disk = await until('the root file system', () => row(page, 'disks', 'root'), 20000);
	c(/^\/\d+\.\d %.+ free of .+/.test(disk[2]), 'disks card: / with its use and free space', disk);
	const lo = await until('lo with its rates', async () => {
		const r = await row(page, 'net', 'lo');
		return r && /kbit\/s|Mbit\/s/.test(r[2]) ? r : null;
	}, 20000);
	c(lo[1] === 'up' && /^loup↓ \d/.test(lo[2]), 'network card: lo up, with its rates', lo);
	const shot = path.join(outdir, 'dashboard-host.png');
	await page.screenshot({ path: shot, fullPage: true });
	console.log('# screenshot: ' + shot);

	// killed: down, live; started again: up, one restart
	app.kill('SIGKILL');
	const down = await until('the killed process down', async () => {
		const r = await row(page, 'procs', 'app_server');
		return r && r[1] === 'down' ? r : null;
	}, 20000);
	c(down[2] === 'app_serverdown0 restartsnot running', 'the killed process turns down on the page, figures gone', down);
	app = startApp();
	const back = await until('the process back', async () => {
		const r = await row(page, 'procs', 'app_server');
		return r && r[1] === 'up' ? r : null;
	}, 20000);
	c(/ · 1 restart$/.test(back[2]), 'started again: up, one restart counted', back);

	// without processes: and host.probes: no such card, once samples have come
	await until('samples on the page without processes or probes', () => other.evaluate(() =>
		Number(document.getElementById('throttle-banner').dataset.seq || 0) >= 3), 20000);
	const none = await other.evaluate(() => ['procs', 'probes'].map((k) => [document.getElementById(k + '-card').hidden,
		document.querySelectorAll('#' + k + ' .m').length]));
	c(JSON.stringify(none) === '[[true,0],[true,0]]', 'a config without them shows no processes or probes card', none);

	const errors = w.errors.concat(wo.errors), foreign = w.foreign.concat(wo.foreign);
	c(errors.length === 0, 'no console errors', errors);
	c(foreign.length === 0, 'no request to any origin but the agents\'', foreign);
	status = c.done();
} catch (e) {
	console.log('not ok - ' + (e && e.stack ? e.stack : e));
	for (const a of agents) {
		console.log('# tegrawatch stderr (last lines):\n' + a.stderr.split('\n').slice(-15).map((l) => '#   ' + l).join('\n'));
	}
	c(false, 'the test ran to its end');
	status = c.done();
} finally {
	if (ctl) {
		await ctl.close();
	}
	for (const a of agents.filter((x) => x.exited === null)) {
		a.proc.kill('SIGTERM');
		const gone = await Promise.race([new Promise((r) => a.proc.once('exit', () => r(true))), sleep(5000).then(() => false)]);
		if (!gone) {
			a.proc.kill('SIGKILL');
		}
	}
	children.forEach((p) => p.exitCode === null && p.signalCode === null && p.kill('SIGKILL'));
	server.close();
	fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(status);
