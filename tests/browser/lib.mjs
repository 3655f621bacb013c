// Shared by the browser tests: Debian's Chromium through playwright-core, a
// watch on the console and on the network, and small checks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const SKIP = 77; // meson: the test was skipped

// playwright-core comes from `npm ci --prefix tests/browser`; without it, or
// without Chromium, the test is skipped with a message that says what to run.
export async function loadPlaywright() {
	if (!fs.existsSync(CHROMIUM)) {
		console.log('SKIP: no Chromium at ' + CHROMIUM + ' (apt-get install chromium)');
		process.exit(SKIP);
	}
	try {
		const require = createRequire(path.join(here, 'package.json'));
		return require('playwright-core');
	} catch (e) {
		console.log('SKIP: playwright-core is not installed (npm ci --prefix tests/browser)');
		process.exit(SKIP);
	}
	return null;
}

// A fresh profile each time, and nothing that talks to the network by itself.
// Playwright adds --headless and --user-data-dir=PROFILE itself.
export async function launch(pw) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tegrawatch-chromium-'));
	const context = await pw.chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1280, height: 900 },
	});
	const close = async () => {
		await context.close().catch(() => {});
		fs.rmSync(profile, { recursive: true, force: true });
	};
	return { context, close };
}

// Records console errors, page errors and every request outside ORIGIN.
export function watch(page, origin) {
	const w = { errors: [], foreign: [], requests: [] };
	page.on('console', (msg) => {
		if (msg.type() === 'error') {
			w.errors.push('console: ' + msg.text());
		}
	});
	page.on('pageerror', (err) => w.errors.push('page error: ' + err.message));
	page.on('request', (req) => {
		const url = req.url();
		w.requests.push(url);
		if (!url.startsWith('data:') && !url.startsWith(origin)) {
			w.foreign.push(url);
		}
	});
	return w;
}

// How many pixels of the canvas are not transparent (the page draws on a
// transparent canvas over the card's background).
export function inkedPixels(page, id) {
	return page.evaluate((cid) => {
		const cv = document.getElementById(cid);
		const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
		let n = 0;
		for (let i = 3; i < d.length; i += 4) {
			if (d[i] > 0) {
				n++;
			}
		}
		return n;
	}, id);
}

// The dashboard's state as the test sees it, read in one go.
export function readState(page) {
	return page.evaluate(() => {
		const b = document.getElementById('throttle-banner');
		const chart = (id) => Number(document.getElementById(id).dataset.points || 0);
		return {
			seq: Number(b.dataset.seq || 0),
			banner: b.dataset.state,
			title: document.getElementById('throttle-title').textContent,
			reasons: [...document.querySelectorAll('#throttle-reasons li')].map((li) => [li.dataset.reason, li.textContent]),
			alerts: [...document.querySelectorAll('#alerts li')].map((li) => ({
				rule: li.dataset.rule, severity: li.dataset.severity, status: li.dataset.status, text: li.textContent,
			})),
			conn: document.getElementById('conn').dataset.state,
			model: document.getElementById('board-model').textContent,
			powerMode: document.getElementById('power-mode').textContent,
			points: { temp: chart('chart-temp'), gpu: chart('chart-gpu'), power: chart('chart-power') },
		};
	});
}

export function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.on('error', reject);
		s.listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => resolve(port));
		});
	});
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls FN until it returns a truthy value or TIMEOUT_MS passes.
export async function until(what, fn, timeoutMs, everyMs = 100) {
	const end = Date.now() + timeoutMs;
	for (;;) {
		const v = await fn();
		if (v) {
			return v;
		}
		if (Date.now() > end) {
			throw new Error('timed out after ' + timeoutMs + ' ms waiting for ' + what);
		}
		await sleep(everyMs);
	}
}

// Minimal test bookkeeping: each check prints one line; the summary line is
// "N passed, N failed".
export function checker() {
	let passed = 0, failed = 0;
	const c = (ok, what, detail) => {
		if (ok) {
			passed++;
			console.log('ok - ' + what);
		} else {
			failed++;
			console.log('not ok - ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail) : ''));
		}
		return ok;
	};
	c.done = () => {
		console.log(passed + ' passed, ' + failed + ' failed');
		return failed === 0 ? 0 : 1;
	};
	c.failed = () => failed;
	return c;
}

// tegrawatch-driven (tests/driven/driven_main.c): the agent of BIN on a clock the test drives, next to BIN in the
// build tree (build/tests/), or TEGRAWATCH_TEST_DRIVEN.
export function drivenBin(bin) {
	return process.env.TEGRAWATCH_TEST_DRIVEN || path.join(path.dirname(bin), 'tests', 'tegrawatch-driven');
}

// The driven clock of CHILD, spawned with a fourth stdio 'pipe' (a socket pair: its fd 3) and
// TEGRAWATCH_DRIVEN_CLOCK=3: clock('run MS PACE'), clock('pace PACE'), clock('pause'), clock('real'),
// clock('now') resolve with the answer after "ok" (the commands of driven_main.c), or reject.
export function drivenClock(child) {
	const sock = child.stdio[3];
	const waiting = [];
	let buf = '';
	sock.setEncoding('utf8');
	sock.on('data', (d) => {
		buf += d;
		for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
			const line = buf.slice(0, i);
			buf = buf.slice(i + 1);
			const w = waiting.shift();
			if (w) {
				w(line);
			}
		}
	});
	const gone = () => {
		while (waiting.length) {
			waiting.shift()(null);
		}
	};
	sock.on('close', gone);
	sock.on('error', gone);
	return (cmd) => new Promise((resolve, reject) => {
		waiting.push((line) => (line !== null && line.startsWith('ok') ? resolve(line.slice(2).trim())
			: reject(new Error('driven clock: ' + cmd + ' answered ' + JSON.stringify(line)))));
		sock.write(cmd + '\n');
	});
}
